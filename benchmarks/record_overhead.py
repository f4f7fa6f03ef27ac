#!/usr/bin/env python3
"""Recording overhead of ilgen: native vs. ilgen record vs. ThreadSanitizer.

Builds every workload in benchmarks/record/ three ways in a temporary directory:

    native   clang-19 -O2 -g -pthread
    record   <bin>/ilgen cc -O2 -g -pthread       (run with ILGEN_OPTIONS=trace_dir=<fresh dir>)
    tsan     clang-19 -O2 -g -pthread -fsanitize=thread

runs each build once untimed (warm-up; checks exit code and output) and then --runs times,
interleaving the builds so that a change in machine load hits all of them alike, and prints a
Markdown table of median wall times, the ratios record/native and record/TSan from this same
run, and the bytes of one recorded trace (sum of the file sizes in its trace directory).

Any failure (build error, non-zero exit, output differing from the native build, a TSan
report, no trace written) stops the script with a message and exit status 1. Missing tools
give exit status 2 and say to run `make build`.

Python 3 standard library only. `make bench` runs it with the defaults.
"""

import argparse
import datetime
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SRC_DIR = BENCH_DIR / "record"
CLANG = "clang-19"
CFLAGS = ["-O2", "-g", "-pthread"]

# name, source file, default size (argv[1]), what it stresses (for the table's legend).
# array_kernel runs only ~0.07 s natively at 384: every cell it writes is a new range of its
# segment, so a recorded run writes ~12 trace bytes per native nanosecond (1.8 GB at 384, ~20 GB
# at a 0.25 s size); see README.md.
WORKLOADS = [
    ("compute", "compute.c", "2000", "compute loop, little sharing (Mandelbrot rows)"),
    ("prodcons", "prodcons.c", "200000", "lock-heavy producer/consumer (mutex + 2 condvars)"),
    ("array_kernel", "array_kernel.c", "384", "array kernel, many shared accesses (stencil + barrier)"),
]


class BenchError(Exception):
    """A failure that must stop the benchmark; the message says what and where."""


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def tail(text, lines=20):
    text = text.decode(errors="replace") if isinstance(text, bytes) else text
    return "\n".join(text.rstrip().splitlines()[-lines:])


def base_env():
    env = dict(os.environ)
    # The user's own settings must not change what we measure.
    for var in ("ILGEN_OPTIONS", "TSAN_OPTIONS"):
        env.pop(var, None)
    return env


def build(kind, src, out, ilgen):
    if kind == "native":
        cmd = [CLANG, *CFLAGS, str(src), "-o", str(out)]
    elif kind == "record":
        cmd = [str(ilgen), "cc", *CFLAGS, str(src), "-o", str(out)]
    elif kind == "tsan":
        cmd = [CLANG, *CFLAGS, "-fsanitize=thread", str(src), "-o", str(out)]
    else:
        raise ValueError(kind)
    proc = subprocess.run(cmd, capture_output=True, env=base_env())
    if proc.returncode != 0 or not out.exists():
        raise BenchError(
            f"building {src.name} ({kind}) failed with exit status {proc.returncode}:\n"
            f"  $ {' '.join(cmd)}\n{tail(proc.stdout + proc.stderr)}"
        )


def dir_bytes(path):
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            total += os.lstat(os.path.join(root, f)).st_size
    return total


class Runner:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.trace_counter = 0

    def run(self, name, kind, exe, size, expect_stdout=None):
        """Runs exe once; returns (seconds, stdout, trace bytes or None)."""
        env = base_env()
        trace_dir = None
        if kind == "record":
            self.trace_counter += 1
            trace_dir = self.work / "traces" / f"{name}-{self.trace_counter}"
            trace_dir.parent.mkdir(exist_ok=True)
            env["ILGEN_OPTIONS"] = f"trace_dir={trace_dir}"
        elif kind == "off":
            env["ILGEN_OPTIONS"] = "mode=off"
        elif kind == "tsan":
            env["TSAN_OPTIONS"] = "exitcode=66"
        cmd = [str(exe), size]
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, capture_output=True, env=env, cwd=self.work, timeout=self.args.timeout
            )
        except subprocess.TimeoutExpired:
            raise BenchError(f"{name} ({kind}) did not finish in {self.args.timeout} s: {' '.join(cmd)}")
        seconds = time.perf_counter() - start
        if self.args.cpu:
            usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            seconds = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
        what = f"{name} ({kind} build)"
        if proc.returncode != 0:
            raise BenchError(
                f"{what} exited with status {proc.returncode}:\n  $ {' '.join(cmd)}\n"
                f"{tail(proc.stderr)}"
            )
        if kind == "tsan" and b"WARNING: ThreadSanitizer" in proc.stderr:
            raise BenchError(f"{what}: ThreadSanitizer reported a problem; the workload must be "
                             f"race-free:\n{tail(proc.stderr, 40)}")
        if expect_stdout is not None and proc.stdout != expect_stdout:
            raise BenchError(
                f"{what} printed something else than the native build:\n"
                f"  native: {expect_stdout.decode(errors='replace').strip()}\n"
                f"  {kind}: {proc.stdout.decode(errors='replace').strip()}\n{tail(proc.stderr)}"
            )
        trace_bytes = None
        if trace_dir is not None:
            if not trace_dir.is_dir():
                raise BenchError(
                    f"{what} wrote no trace at {trace_dir} (ILGEN_OPTIONS=trace_dir=...):\n"
                    f"{tail(proc.stderr)}"
                )
            trace_bytes = dir_bytes(trace_dir)
            if not (trace_dir / "meta.json").is_file():
                raise BenchError(f"{what}: {trace_dir} holds no meta.json; it is not a trace")
            shutil.rmtree(trace_dir)
        return seconds, proc.stdout, trace_bytes


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def nproc():
    try:
        return len(os.sched_getaffinity(0))  # what `nproc` prints
    except AttributeError:
        return os.cpu_count()


def load_avg():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def fmt_s(x):
    return f"{x:.3f}"


def fmt_bytes(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n} ({n / scale:.1f} {unit})"
    return str(n)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Print the recording-overhead table: native vs. ilgen record vs. TSan."
    )
    p.add_argument("--runs", type=int, default=5, help="timed runs per build (median is shown; default 5)")
    p.add_argument("--bin", default=str(REPO / "target" / "release"),
                   help="directory holding the ilgen CLI (default: target/release of this repo)")
    p.add_argument("--only", action="append", metavar="NAME",
                   help="run only this workload (repeatable, or comma-separated); one of: "
                   + ", ".join(w[0] for w in WORKLOADS))
    p.add_argument("--size", action="append", default=[], metavar="NAME=N",
                   help="override a workload's size argument (argv[1]), e.g. prodcons=50000")
    p.add_argument("--split", action="store_true",
                   help="also time the ilgen build with ILGEN_OPTIONS=mode=off (instrumentation "
                   "without recording) to split hook cost from trace-writing cost")
    p.add_argument("--cpu", action="store_true",
                   help="report user+system CPU seconds instead of wall seconds (steadier on a "
                   "machine whose cores are shared with other work)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per run before giving up (default 600)")
    p.add_argument("--keep", action="store_true", help="keep the build directory and print its path")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    names = [w[0] for w in WORKLOADS]
    if args.only:
        wanted = [n.strip() for item in args.only for n in item.split(",") if n.strip()]
        for n in wanted:
            if n not in names:
                p.error(f"unknown workload {n!r} for --only; choose from: {', '.join(names)}")
        args.only = wanted
    sizes = {}
    for item in args.size:
        name, sep, value = item.partition("=")
        if not sep or name not in names or not value.isdigit():
            p.error(f"--size wants NAME=N with NAME one of {', '.join(names)}; got {item!r}")
        sizes[name] = value
    args.size = sizes
    return args


def check_tools(args):
    problems = []
    ilgen = Path(args.bin).resolve() / "ilgen"
    if not (ilgen.is_file() and os.access(ilgen, os.X_OK)):
        problems.append(f"the ilgen CLI is missing: {ilgen} (run `make build`, or pass --bin DIR)")
    if shutil.which(CLANG) is None:
        problems.append(f"{CLANG} is not on PATH (run `make build`, which installs it via `make deps`)")
    if problems:
        for msg in problems:
            log(f"error: {msg}")
        sys.exit(2)
    return ilgen


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    ilgen = check_tools(args)
    workloads = [w for w in WORKLOADS if not args.only or w[0] in args.only]
    kinds = ["native", "record", "tsan"] + (["off"] if args.split else [])

    work = Path(tempfile.mkdtemp(prefix="ilgen-bench-"))
    if any(c in str(work) for c in ": \t\n"):
        # ILGEN_OPTIONS separates its pairs by ':' or white space.
        shutil.rmtree(work)
        log(f"error: the temporary directory {work} contains ':' or white space, which "
            f"ILGEN_OPTIONS=trace_dir=... cannot carry; set TMPDIR to another directory")
        return 2
    try:
        runner = Runner(args, work)
        rows = []
        for name, src, default_size, desc in workloads:
            size = args.size.get(name, default_size)
            src_path = SRC_DIR / src
            exes = {}
            for kind in ("native", "record", "tsan"):
                exes[kind] = work / f"{name}.{kind}"
                log(f"[{name}] building {kind}")
                build(kind, src_path, exes[kind], ilgen)
            exes["off"] = exes["record"]

            # Warm-up: untimed, establishes the expected output and checks every build.
            log(f"[{name}] warm-up and checks (size {size})")
            _, expected, _ = runner.run(name, "native", exes["native"], size)
            if not expected.strip():
                raise BenchError(f"{name} (native build) printed nothing")
            for kind in kinds[1:]:
                runner.run(name, kind, exes[kind], size, expected)

            times = {k: [] for k in kinds}
            trace_sizes = []
            for i in range(args.runs):
                log(f"[{name}] run {i + 1}/{args.runs}")
                for kind in kinds:
                    secs, _, tbytes = runner.run(name, kind, exes[kind], size, expected)
                    times[kind].append(secs)
                    if tbytes is not None:
                        trace_sizes.append(tbytes)
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((name, size, med, int(statistics.median(trace_sizes)), desc))

        print_table(args, rows)
    except BenchError as e:
        log(f"error: {e}")
        return 1
    finally:
        if args.keep:
            log(f"build directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def print_table(args, rows):
    header = ["workload", "native s", "ilgen record s", "TSan s", "record/native",
              "record/TSan", "trace bytes"]
    if args.split:
        header[3:3] = ["ilgen mode=off s"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    for name, size, med, tbytes, _desc in rows:
        cells = [f"{name} ({size})", fmt_s(med["native"]), fmt_s(med["record"]), fmt_s(med["tsan"]),
                 f"{med['record'] / med['native']:.2f}x", f"{med['record'] / med['tsan']:.2f}x",
                 fmt_bytes(tbytes)]
        if args.split:
            cells[3:3] = [fmt_s(med["off"])]
        lines.append("| " + " | ".join(cells) + " |")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("\n".join(lines))
    print()
    metric = "user+sys CPU time" if args.cpu else "wall time"
    print(f"{now}; nproc {nproc()}; CPU: {cpu_model()}; load average {load_avg()}; "
          f"median of {args.runs} runs ({metric}, after one warm-up run); clang-19 -O2 -g; "
          f"trace bytes = median over the recorded runs of the summed file sizes in the trace "
          f"directory.")
    print("Workloads: " + "; ".join(f"{name}: {desc}" for name, _s, _m, _t, desc in rows) + ".")
    slower = [name for name, _s, med, _t, _d in rows if med["record"] >= med["tsan"]]
    if slower:
        print(f"Target missed: recording is not cheaper than TSan on: {', '.join(slower)}.")
    else:
        print("Target met: recording is cheaper than TSan on every workload.")


if __name__ == "__main__":
    sys.exit(main())
