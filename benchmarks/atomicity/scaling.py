#!/usr/bin/env python3
"""Atomicity analysis time and memory against trace size, on the apps with marked transactions.

Builds bank.c, workqueue.c and elevator.c (this directory) with `ilgen cc -g -O0`, records each
once per size (a calibration run of 2000 iterations gives the events per iteration), and runs
`ilgen detect --no-replay` on the trace twice: without and with `--atomicity`. Prints a Markdown
table: captured events (sync events + access records), transactions, distinct violations with a
schedule, and per detect the wall time, the CPU time (user + system: the machine may be shared)
and the peak RSS (GNU time). The atomicity analysis's own cost, the last column, is measured
alone: `analysis/examples/atomicity_time.rs` prepares the trace's model and times the prediction
on its thread (the difference of the two detects' CPU times is as noisy as they are).

Usage: python3 benchmarks/atomicity/scaling.py [--ilgen target/release/ilgen]
       [--apps bank,workqueue,elevator] [--min-events 1e6] [--max-events 1e7] [--threads 4]
       [--timeout 900] [--memory-limit GIB]
Sizes are the powers of ten from --min-events up to --max-events. With --memory-limit each detect
runs under `prlimit --as` (its address space at most GIB GiB), so that a run too big for the
machine fails on its own allocation, with the row saying so, instead of taking memory from the
machine's other work. Python 3 standard library only.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "detect"))
from scaling import GNU_TIME, record  # noqa: E402  (the detect sweep's recorder)

APPS = ("bank", "workqueue", "elevator")


def detect(ilgen, trace, atomicity, timeout, memory_limit=None):
    """Runs detect under GNU time; gives (wall s, cpu s, peak RSS KiB, candidates.json), None on
    a timeout, or the last line of its stderr when it failed within --memory-limit."""
    cmd = [GNU_TIME, "-f", "%e %U %S %M", ilgen, "detect", "--no-replay", trace]
    if atomicity:
        cmd.insert(-1, "--atomicity")
    if memory_limit:
        cmd = ["prlimit", f"--as={int(memory_limit * 2**30)}"] + cmd
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if p.returncode not in (0, 66):
        lines = p.stderr.strip().splitlines()
        if memory_limit and lines:
            return f"failed within {memory_limit:g} GiB: {lines[-2] if len(lines) > 1 else lines[-1]}"
        sys.exit(f"scaling.py: ilgen detect failed on {trace}:\n{p.stderr}")
    wall, user, system, rss = p.stderr.strip().splitlines()[-1].split()
    with open(os.path.join(trace, "candidates.json")) as f:
        c = json.load(f)
    return float(wall), float(user) + float(system), int(rss), c


def alone(timer, trace, memory_limit):
    """The atomicity analysis's own CPU seconds on `trace` (atomicity_time), or None."""
    cmd = [timer, trace]
    if memory_limit:
        cmd = ["prlimit", f"--as={int(memory_limit * 2**30)}"] + cmd
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return float(p.stdout.split()[2]) if p.returncode == 0 else None


def captured(stats):
    return stats["sync_events"] + stats["accesses_read"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ilgen", default=os.path.join(ROOT, "target", "release", "ilgen"))
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--timer", default=os.path.join(ROOT, "target", "release", "examples",
                                                    "atomicity_time"))
    ap.add_argument("--min-events", type=float, default=1e6)
    ap.add_argument("--max-events", type=float, default=1e7)
    ap.add_argument("--memory-limit", type=float, metavar="GIB",
                    help="address space of each detect (prlimit --as), in GiB")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=900, help="seconds per detect run")
    args = ap.parse_args()
    if not os.access(args.ilgen, os.X_OK):
        sys.exit(f"scaling.py: {args.ilgen} not found; run `cargo build --release --workspace`")
    if not os.access(args.timer, os.X_OK):
        sys.exit(f"scaling.py: {args.timer} not found; run `cargo build --release -p "
                 f"ilgen-analysis --example atomicity_time`")
    if not os.access(GNU_TIME, os.X_OK):
        sys.exit(f"scaling.py: {GNU_TIME} not found; install GNU time (Debian package `time`)")
    sizes = [10 ** k for k in range(6, 9) if args.min_events <= 10 ** k <= args.max_events]
    print(f"| app | threads | captured events | transactions | violations | "
          f"detect s (CPU s) | RSS | --atomicity s (CPU s) | RSS | atomicity alone CPU s |\n"
          f"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    with tempfile.TemporaryDirectory(prefix="ilgen-atomicity-bench-") as tmp:
        for app in args.apps.split(","):
            exe = os.path.join(tmp, app)
            subprocess.run([args.ilgen, "cc", "-g", "-O0", os.path.join(HERE, f"{app}.c"),
                            "-o", exe], check=True)
            trace = os.path.join(tmp, f"{app}.trace")
            record(exe, args.threads, 2000, trace)
            per_iter = captured(detect(args.ilgen, trace, False, args.timeout)[3]["stats"]) / 2000
            for target in sizes:
                iters = max(1, round(target / per_iter))
                record(exe, args.threads, iters, trace)
                plain = detect(args.ilgen, trace, False, args.timeout, args.memory_limit)
                atom = None
                if not isinstance(plain, str):
                    atom = detect(args.ilgen, trace, True, args.timeout, args.memory_limit)
                own = alone(args.timer, trace, args.memory_limit)
                shutil.rmtree(trace, ignore_errors=True)
                failed = next((r for r in (plain, atom) if isinstance(r, str)), None)
                if failed:
                    print(f"| {app} | {args.threads} | ({iters} iterations) | | | {failed} | | "
                          f"| | |", flush=True)
                    break
                if plain is None or atom is None:
                    print(f"| {app} | {args.threads} | ({iters} iterations) | | | timeout | | "
                          f"| | |", flush=True)
                    break
                s = atom[3]["stats"]
                a = s["atomicity"]
                print(f"| {app} | {args.threads} | {captured(s):,} | {a['transactions']:,} | "
                      f"{a['predicted']} | {plain[0]:.1f} ({plain[1]:.1f}) | "
                      f"{plain[2] / 1024:.0f} MiB | {atom[0]:.1f} ({atom[1]:.1f}) | "
                      f"{atom[2] / 1024:.0f} MiB | {'?' if own is None else f'{own:.2f}'} |", flush=True)


if __name__ == "__main__":
    main()
