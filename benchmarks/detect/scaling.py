#!/usr/bin/env python3
"""Analysis time of `ilgen detect --no-replay` against trace size, on real recorded workloads.

Builds the workloads in benchmarks/detect/workloads/ with `ilgen cc -g -O0`, records each once per
size (the iteration count scales the trace; a small calibration run gives the events per
iteration), runs `ilgen detect --no-replay --window W` on the trace and prints a Markdown table:
captured events (sync events + access records in the trace), reduced events (sync events + the
accesses kept on shared objects, one per object and segment), sync events, candidates, detect wall
and CPU (user + system) time, detect peak RSS, and the states the exhaustive search visited (it stops at 200,000 per
variable and for deadlocks, which bounds its share of the time). Two sweeps: trace length at a
fixed thread count (--threads) and window size, then thread count at a fixed size
(--thread-sweep-events).

Usage: python3 benchmarks/detect/scaling.py [--ilgen target/release/ilgen] [--max-events 1e7]
       [--min-events 1e3] [--workloads locked_racy,handoff] [--window 10000] [--timeout 120]
       [--thread-sweep-events 1e6 (0: no thread sweep)] [--big-lock /tmp/ilgen-bigrun.lock]
Runs of 10^8 events or more (recording and detect) hold an exclusive flock on --big-lock, so
that two such runs (which may take many GiB) started by different people never overlap.
Peak RSS comes from /usr/bin/time -v when it is installed, else from getrusage of the children
(then a maximum over all runs so far, which the table says). Python 3 standard library only.
"""

import argparse
import contextlib
import fcntl
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = {
    # name: source in workloads/ (each takes THREADS ITERATIONS; handoff needs an even THREADS)
    "locked_racy": "locked_racy.c",
    "handoff": "handoff.c",
    "phases": "phases.c",
    "atomic_index": "atomic_index.c",
}
GNU_TIME = "/usr/bin/time"
BIG = 10 ** 8


@contextlib.contextmanager
def held(path):
    """Holds an exclusive flock on `path` (waiting for it); nothing if `path` is None."""
    if path is None:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def build(ilgen, name, out):
    src = os.path.join(HERE, "workloads", WORKLOADS[name])
    exe = os.path.join(out, name)
    subprocess.run([ilgen, "cc", "-g", "-O0", src, "-o", exe], check=True)
    return exe


def record(exe, threads, iters, trace):
    shutil.rmtree(trace, ignore_errors=True)
    env = dict(os.environ, ILGEN_OPTIONS=f"trace_dir={trace}")
    start = time.perf_counter()
    subprocess.run([exe, str(threads), str(iters)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def detect(ilgen, trace, window, timeout):
    """Runs detect; gives (wall seconds, CPU seconds or None, peak RSS in KiB, rss is exact,
    stats, candidates)."""
    cmd = [ilgen, "detect", "--no-replay", "--window", str(window), trace]
    exact = os.access(GNU_TIME, os.X_OK)
    if exact:
        cmd = [GNU_TIME, "-v"] + cmd
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - start
    if p.returncode not in (0, 66):
        sys.exit(f"scaling.py: ilgen detect failed on {trace}:\n{p.stderr}")
    rss, cpu = None, None
    if exact:
        cpu = 0.0
        for line in p.stderr.splitlines():
            if "Maximum resident set size" in line:
                rss = int(line.rsplit(":", 1)[1])
            elif "User time (seconds)" in line or "System time (seconds)" in line:
                cpu += float(line.rsplit(":", 1)[1])
    else:
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(os.path.join(trace, "candidates.json")) as f:
        c = json.load(f)
    return seconds, cpu, rss, exact, c["stats"], len(c["candidates"])


def measure(ilgen, exe, name, threads, target, per_iter, args, tmp):
    iters = max(1, round(target / (threads * per_iter)))
    trace = os.path.join(tmp, f"{name}-{threads}-{iters}.trace")
    with held(args.big_lock if target >= BIG else None):
        rec = record(exe, threads, iters, trace)
        r = detect(ilgen, trace, args.window, args.timeout)
        shutil.rmtree(trace, ignore_errors=True)
    if r is None:
        return {"workload": name, "threads": threads, "iters": iters, "timeout": True}
    seconds, cpu, rss, exact, s, n = r
    return {
        "workload": name, "threads": threads, "iters": iters, "record_s": rec,
        "captured": s["sync_events"] + s["accesses_read"],
        "reduced": s["sync_events"] + s["accesses_kept"],
        "sync": s["sync_events"], "candidates": n, "seconds": seconds, "cpu": cpu, "rss_kib": rss,
        "rss_exact": exact, "states": s["solve"]["exhaustive_states"],
        "windows": s["solve"]["exhaustive_windows"],
    }


def per_iteration(ilgen, exe, name, threads, tmp):
    """Captured events per iteration and thread, from a small calibration run."""
    iters = 2000
    trace = os.path.join(tmp, f"{name}-calibrate.trace")
    record(exe, threads, iters, trace)
    r = detect(ilgen, trace, 10_000, 120)
    shutil.rmtree(trace, ignore_errors=True)
    s = r[4]
    return (s["sync_events"] + s["accesses_read"]) / (threads * iters)


def row(r):
    if r.get("timeout"):
        return (f"| {r['workload']} | {r['threads']} | ({r['iters']} iterations) | | | | "
                f"> timeout | | | |")
    rss = f"{r['rss_kib'] / 1024:,.0f} MiB" + ("" if r["rss_exact"] else " (max so far)")
    cpu = "" if r["cpu"] is None else f"{r['cpu']:.2f}"
    return (f"| {r['workload']} | {r['threads']} | {r['captured']:,} | {r['reduced']:,} | "
            f"{r['sync']:,} | {r['candidates']} | {r['seconds']:.2f} | {cpu} | {rss} | "
            f"{r['states']:,} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ilgen", default=os.path.join(ROOT, "target", "release", "ilgen"))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--max-events", type=float, default=1e7)
    ap.add_argument("--min-events", type=float, default=1e3, help="smallest size of the length sweep")
    ap.add_argument("--threads", type=int, default=4, help="threads of the length sweep")
    ap.add_argument("--thread-sweep-events", type=float, default=1e6, help="0: no thread sweep")
    ap.add_argument("--window", type=int, default=10_000)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per detect run")
    ap.add_argument("--big-lock", default="/tmp/ilgen-bigrun.lock",
                    help="file locked around runs of 10^8 events or more")
    args = ap.parse_args()
    if not os.access(args.ilgen, os.X_OK):
        sys.exit(f"scaling.py: {args.ilgen} not found; run `cargo build --release --workspace`")
    sizes = [10 ** k for k in range(3, 10) if args.min_events <= 10 ** k <= args.max_events]
    header = ("| workload | threads | captured events | reduced events | sync events | "
              "candidates | detect wall (s) | detect CPU (s) | peak RSS | exhaustive states |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="ilgen-detect-bench-") as tmp:
        exes = {w: build(args.ilgen, w, tmp) for w in args.workloads.split(",")}
        print(f"### Trace length ({args.threads} threads, --window {args.window})\n")
        print(header, flush=True)
        for name, exe in exes.items():
            per = per_iteration(args.ilgen, exe, name, args.threads, tmp)
            for target in sizes:
                r = measure(args.ilgen, exe, name, args.threads, target, per, args, tmp)
                print(row(r), flush=True)
                if r.get("timeout"):
                    break
        if not args.thread_sweep_events:
            return
        print(f"\n### Threads (~{args.thread_sweep_events:.0e} captured events, "
              f"--window {args.window})\n")
        print(header, flush=True)
        for name, exe in exes.items():
            for threads in (2, 4, 8):
                per = per_iteration(args.ilgen, exe, name, threads, tmp)
                r = measure(args.ilgen, exe, name, threads, args.thread_sweep_events, per, args,
                            tmp)
                print(row(r), flush=True)


if __name__ == "__main__":
    main()
