#!/usr/bin/env python3
"""Native solver against ilgen's CSP checker on the same models: the checker is the naive baseline.

Records the workloads of benchmarks/detect/workloads/ (THREADS ITERATIONS) at growing sizes, and
the paper's Listing 1 (benchmarks/scenarios/s01_listing1.c), then decides each trace twice with
`ilgen detect --no-replay`: `--solver native` (cut-based fast path, then the exhaustive search
with partial-order reduction) and `--solver check` (the exported CSP_M model explored state by
state, as FDR would, without partial-order reduction). Prints a Markdown table: sync events,
wall time of each (median of --repeat runs), the ratio, the states the checker explored (and how
many of its checks stopped at its 2,000,000-state bound: their verdict is "no finding"), and
whether the verdicts (racy objects, deadlock) agree. A run over --timeout seconds is shown as
such; the sweep of that workload at that thread count stops there.

Usage: python3 benchmarks/csp/solvers.py [--ilgen PATH] [--repeat 3] [--timeout 60]
Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benchmarks", "detect"))
import scaling  # noqa: E402  (build and record are shared with the detect benchmark)

# (workload, threads, iterations per thread): length sweeps at 2 and 4 threads, and a thread
# sweep. A sweep stops at its first timeout (same workload and thread count).
SWEEP = [("locked_racy", 2, n) for n in (1, 16, 64, 256, 1024)] + \
        [("locked_racy", t, 2) for t in (3, 4, 5, 6, 7, 8)] + \
        [("locked_racy", 4, n) for n in (4, 8, 16)] + \
        [("handoff", 2, n) for n in (1, 16, 256, 1024)] + \
        [("handoff", 4, n) for n in (4, 16, 64)] + \
        [("phases", 2, n) for n in (1, 16, 256)] + \
        [("phases", 4, n) for n in (4, 16, 64)]


def decide(ilgen, trace, solver, timeout):
    """Wall seconds and the candidates file of one `detect --no-replay`, or None on timeout."""
    start = time.perf_counter()
    try:
        p = subprocess.run([ilgen, "detect", "--no-replay", "--format", "json", "--solver",
                            solver, trace], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    seconds = time.perf_counter() - start
    if p.returncode not in (0, 66):
        sys.exit(f"solvers.py: detect --solver {solver} failed on {trace}:\n{p.stderr}")
    return seconds, json.loads(p.stdout)


def verdict(doc):
    races = sorted(c["object"]["addr"] for c in doc["candidates"] if c["kind"] == "race")
    return races, any(c["kind"] == "deadlock" for c in doc["candidates"])


def measure(ilgen, trace, repeat, timeout):
    out = {}
    for solver in ("native", "check"):
        runs = []
        for _ in range(repeat):
            r = decide(ilgen, trace, solver, timeout)
            if r is None:
                break
            runs.append(r)
        out[solver] = (statistics.median(s for s, _ in runs), runs[-1][1]) if runs else None
    return out


def row(name, r):
    native, check = r["native"], r["check"]
    sync = native[1]["stats"]["sync_events"]
    nat = f"{native[0]:.3f}"
    if check is None:
        return f"| {name} | {sync:,} | {nat} | > timeout | | | |"
    solve = check[1]["stats"]["solve"]
    states = f"{solve['checker_states']:,}"
    if solve.get("checker_gave_up"):
        states += f" ({solve['checker_gave_up']} gave up)"
    agree = "yes" if verdict(native[1]) == verdict(check[1]) else "**NO**"
    return (f"| {name} | {sync:,} | {nat} | {check[0]:.3f} | {check[0] / native[0]:.1f}x | "
            f"{states} | {agree} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ilgen", default=os.path.join(ROOT, "target", "release", "ilgen"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    if not os.access(args.ilgen, os.X_OK):
        sys.exit(f"solvers.py: {args.ilgen} not found; run `make build`")
    print(f"{datetime.date.today()} on {platform.node()} ({os.cpu_count()} cores); wall seconds, "
          f"median of {args.repeat}; timeout {args.timeout:.0f} s\n")
    print("| trace | sync events | native (s) | checker (s) | checker / native | checker states "
          "| verdicts agree |")
    print("|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="ilgen-csp-bench-") as tmp:
        listing1 = os.path.join(tmp, "listing1")
        subprocess.run([args.ilgen, "cc", "-g", "-O0",
                        os.path.join(ROOT, "benchmarks", "scenarios", "s01_listing1.c"), "-o",
                        listing1], check=True)
        trace = os.path.join(tmp, "listing1.trace")
        subprocess.run([listing1], env=dict(os.environ, ILGEN_OPTIONS=f"trace_dir={trace}"),
                       check=True, stdout=subprocess.DEVNULL)
        print(row("listing1", measure(args.ilgen, trace, args.repeat, args.timeout)), flush=True)
        exes = {}
        stopped = set()
        for name, threads, iters in SWEEP:
            if (name, threads) in stopped:
                continue
            if name not in exes:
                exes[name] = scaling.build(args.ilgen, name, tmp)
            trace = os.path.join(tmp, f"{name}-{threads}-{iters}.trace")
            scaling.record(exes[name], threads, iters, trace)
            r = measure(args.ilgen, trace, args.repeat, args.timeout)
            print(row(f"{name} {threads}x{iters}", r), flush=True)
            if r["check"] is None:
                stopped.add((name, threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
