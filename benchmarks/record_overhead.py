#!/usr/bin/env python3
"""Recording and replay overhead of ilgen: native vs. ilgen record / replay vs. ThreadSanitizer.

Builds every workload in benchmarks/record/ three ways in a temporary directory:

    native   clang-19 -O2 -g -pthread
    record   <bin>/ilgen cc -O2 -g -pthread       (run with ILGEN_OPTIONS=trace_dir=<fresh dir>)
    tsan     clang-19 -O2 -g -pthread -fsanitize=thread

runs each build once untimed (warm-up; checks exit code and output) and then --runs times,
interleaving the builds so that a change in machine load hits all of them alike, and prints a
Markdown table of median wall times, the ratios record/native and record/TSan from this same
run, and the bytes of one recorded trace (sum of the file sizes in its trace directory).

Replay (unless --no-replay), in the same run: one more recorded run per workload gives a trace,
from which tests/replay/Inputs/schedule.py writes two schedules, and the record build is run in
ILGEN_OPTIONS=mode=replay under each of them, --replay-runs times, interleaved with a TSan run:

    replay   the whole recorded order (schedule.py --recorded): every sync operation is a step
             that waits for its turn (worst case of the gate), plus the happens-before detector
    HB-only  a schedule with no steps (schedule.py with no STEP): the gate lets every operation
             run free from the start, so this is the online happens-before detector alone

Every replay must end with result `no_error`, the whole schedule followed, no race and the
native build's output; otherwise the replay cells say FAILED, the outcome is printed on
stderr, and the script exits with status 1 after the table (the workloads are race-free: a
race or a divergence there is a runtime bug).

Any other failure (build error, non-zero exit, output differing from the native build, a TSan
report, no trace written) stops the script with a message and exit status 1. Missing tools
give exit status 2 and say to run `make build`.

Python 3 standard library only. `make bench` runs it with the defaults.
"""

import argparse
import datetime
import json
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


# Replay is measured at a smaller size where the whole recorded order is too long to write and
# read back in the time `make bench` may take: prodcons at 200000 has 4.2 M sync records, a
# 322 MB schedule that schedule.py takes ~150 s to write and the runtime 3.7 GB to hold.
# TSan is then also timed at that size, for the replay/TSan ratios.
REPLAY_SIZES = {"prodcons": "20000"}

SCHEDULE_PY = REPO / "tests" / "replay" / "Inputs" / "schedule.py"
REPLAY_KINDS = ("replay", "hbonly")
REPLAY_LABEL = {"replay": "replay (whole recorded order)", "hbonly": "HB-only (schedule of 0 steps)"}


class BenchError(Exception):
    """A failure that must stop the benchmark; the message says what and where."""


class ReplayFailure(BenchError):
    """A replay that did not end clean: reported after the table, the script exits 1."""


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

    def run(self, name, kind, exe, size, expect_stdout=None, schedule=None, keep_trace=None):
        """Runs exe once; returns (seconds, stdout, trace bytes or None).

        keep_trace: a record run writes its trace there and leaves it. schedule: the schedule
        file of a replay run (kind "replay" or "hbonly"), whose outcome is checked."""
        env = base_env()
        trace_dir = None
        outcome_dir = None
        if kind in ("record", "nograce"):
            self.trace_counter += 1
            trace_dir = keep_trace or self.work / "traces" / f"{name}-{self.trace_counter}"
            trace_dir.parent.mkdir(exist_ok=True)
            env["ILGEN_OPTIONS"] = f"trace_dir={trace_dir}"
            if kind == "nograce":
                env["ILGEN_OPTIONS"] += ":exit_grace_ms=0"
        elif kind in REPLAY_KINDS:
            self.trace_counter += 1
            outcome_dir = self.work / "outcomes" / f"{name}-{kind}-{self.trace_counter}"
            outcome_dir.parent.mkdir(exist_ok=True)
            env["ILGEN_OPTIONS"] = f"mode=replay:schedule={schedule}:outcome_dir={outcome_dir}"
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
        if outcome_dir is not None:
            self.check_outcome(name, kind, size, f"ILGEN_OPTIONS={env['ILGEN_OPTIONS']} {' '.join(cmd)}",
                               proc, outcome_dir, expect_stdout)
            return seconds, proc.stdout, None
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
            if keep_trace is None:
                shutil.rmtree(trace_dir)
        return seconds, proc.stdout, trace_bytes

    def check_outcome(self, name, kind, size, cmdline, proc, outcome_dir, expect_stdout):
        """A replay must follow its whole schedule, find nothing, and print what native does."""
        what = f"{name} ({size}) {REPLAY_LABEL[kind]}"
        env_line = f"  $ {cmdline}"
        path = outcome_dir / "replay-outcome.json"
        try:
            text = path.read_text()
            outcome = json.loads(text)
        except (OSError, ValueError) as e:
            raise ReplayFailure(f"{what}: no readable {path} ({e}); exit status "
                                f"{proc.returncode}\n{env_line}\n{tail(proc.stderr)}")
        problems = []
        if outcome.get("result") != "no_error":
            problems.append(f"result is {outcome.get('result')!r}, not 'no_error'")
        if outcome.get("races"):
            problems.append(f"{len(outcome['races'])} race(s) reported on a race-free workload")
        if not outcome.get("schedule_followed") or outcome.get("steps_done") != outcome.get("steps_total"):
            problems.append(f"schedule not followed ({outcome.get('steps_done')} of "
                            f"{outcome.get('steps_total')} steps)")
        if proc.returncode != 0:
            problems.append(f"exit status {proc.returncode}")
        if expect_stdout is not None and proc.stdout != expect_stdout:
            problems.append("output differs from the native build's: "
                            f"{proc.stdout.decode(errors='replace').strip()[:200]!r}")
        if problems:
            raise ReplayFailure(f"{what}: " + "; ".join(problems) + f"\n{env_line}\n"
                                f"outcome {path}:\n{text.strip()}\nstderr:\n{tail(proc.stderr)}")
        shutil.rmtree(outcome_dir)


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
    p.add_argument("--no-replay", dest="replay", action="store_false",
                   help="skip the replay and HB-only columns")
    p.add_argument("--replay-runs", type=int, default=3,
                   help="timed runs of each replay (default 3, fewer than --runs to keep "
                   "`make bench` short; the median is shown)")
    p.add_argument("--replay-size", action="append", default=[], metavar="NAME=N",
                   help="size (argv[1]) of a workload's replay runs; default: its size, except "
                   + ", ".join(f"{k}={v}" for k, v in REPLAY_SIZES.items()))
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
    if args.replay_runs < 1:
        p.error("--replay-runs must be at least 1")
    for opt in ("size", "replay_size"):
        sizes = {}
        for item in getattr(args, opt):
            name, sep, value = item.partition("=")
            if not sep or name not in names or not value.isdigit():
                p.error(f"--{opt.replace('_', '-')} wants NAME=N with NAME one of "
                        f"{', '.join(names)}; got {item!r}")
            sizes[name] = value
        setattr(args, opt, sizes)
    return args


def check_tools(args):
    problems = []
    ilgen = Path(args.bin).resolve() / "ilgen"
    if not (ilgen.is_file() and os.access(ilgen, os.X_OK)):
        problems.append(f"the ilgen CLI is missing: {ilgen} (run `make build`, or pass --bin DIR)")
    if shutil.which(CLANG) is None:
        problems.append(f"{CLANG} is not on PATH (run `make build`, which installs it via `make deps`)")
    if args.replay and not SCHEDULE_PY.is_file():
        problems.append(f"{SCHEDULE_PY} is missing (it writes the replay schedules)")
    if problems:
        for msg in problems:
            log(f"error: {msg}")
        sys.exit(2)
    return ilgen


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    ilgen = check_tools(args)
    workloads = [w for w in WORKLOADS if not args.only or w[0] in args.only]
    # "nograce": the record build with the exit grace off (exit_grace_ms=0), for the grace's cost.
    kinds = ["native", "record", "nograce", "tsan"] + (["off"] if args.split else [])

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
        failures = []
        for name, src, default_size, desc in workloads:
            size = args.size.get(name, default_size)
            src_path = SRC_DIR / src
            exes = {}
            for kind in ("native", "record", "tsan"):
                exes[kind] = work / f"{name}.{kind}"
                log(f"[{name}] building {kind}")
                build(kind, src_path, exes[kind], ilgen)
            exes["off"] = exes["record"]
            exes["nograce"] = exes["record"]

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
                    if tbytes is not None and kind == "record":
                        trace_sizes.append(tbytes)
            med = {k: statistics.median(v) for k, v in times.items()}
            rsize = None
            if args.replay:
                rsize = args.replay_size.get(name, REPLAY_SIZES.get(name, size))
                if name in args.size and name not in args.replay_size:
                    rsize = size  # an explicit --size applies to replay too
                replay_phase(args, runner, work, name, exes, size, rsize, expected, med, failures)
            rows.append((name, size, med, int(statistics.median(trace_sizes)), desc, rsize))

        print_table(args, rows)
        if failures:
            log("")
            for msg in failures:
                log(f"error: replay failed: {msg}\n")
            log(f"error: {len(failures)} replay(s) failed (see above); the workloads are "
                f"race-free, so this is a runtime bug")
            return 1
    except BenchError as e:
        log(f"error: {e}")
        return 1
    finally:
        if args.keep:
            log(f"build directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def write_schedule(trace, out, *steps):
    """Runs tests/replay/Inputs/schedule.py TRACE STEPS... > out; returns its number of steps."""
    with open(out, "wb") as f:
        proc = subprocess.run([sys.executable, str(SCHEDULE_PY), str(trace), *steps],
                              stdout=f, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise BenchError(f"{SCHEDULE_PY.name} {trace} {' '.join(steps)} failed with exit status "
                         f"{proc.returncode}:\n{tail(proc.stderr)}")
    with open(out) as f:
        return len(json.load(f)["steps"])


def replay_phase(args, runner, work, name, exes, size, rsize, expected, med, failures):
    """Times replay, HB-only and TSan (all at rsize, interleaved) into med."""
    if rsize != size:
        _, expected, _ = runner.run(name, "native", exes["native"], rsize)
    trace = work / "sched" / f"{name}-trace"
    log(f"[{name}] replay: recording a trace at size {rsize}, writing schedules")
    runner.run(name, "record", exes["record"], rsize, expected, keep_trace=trace)
    start = time.perf_counter()
    schedules = {"replay": work / "sched" / f"{name}-recorded.json",
                 "hbonly": work / "sched" / f"{name}-empty.json"}
    med["replay_steps"] = write_schedule(trace, schedules["replay"], "--recorded")
    med["hbonly_steps"] = write_schedule(trace, schedules["hbonly"])
    log(f"[{name}] replay: {med['replay_steps']} steps in the recorded order "
        f"({schedules['replay'].stat().st_size} bytes), schedules written in "
        f"{time.perf_counter() - start:.1f} s")
    shutil.rmtree(trace)
    # TSan runs again, interleaved with the replays, for the ratios: same size, same load.
    kinds = ["tsan"]
    for kind in REPLAY_KINDS:
        try:
            log(f"[{name}] {REPLAY_LABEL[kind]}: warm-up and checks (size {rsize})")
            runner.run(name, kind, exes["record"], rsize, expected, schedule=schedules[kind])
            kinds.append(kind)
        except ReplayFailure as e:
            failures.append(str(e))
            med[kind] = None
    times = {k: [] for k in kinds}
    for i in range(args.replay_runs):
        log(f"[{name}] replay run {i + 1}/{args.replay_runs}")
        for kind in kinds:
            exe = exes["tsan"] if kind == "tsan" else exes["record"]
            secs, _, _ = runner.run(name, kind, exe, rsize, expected,
                                    schedule=schedules.get(kind))
            times[kind].append(secs)
    for kind, v in times.items():
        med["tsan_r" if kind == "tsan" else kind] = statistics.median(v)


def print_table(args, rows):
    header = ["workload", "native s", "ilgen record s", "TSan s", "record/native",
              "record/TSan", "trace bytes", "grace off s", "exit grace cost"]
    if args.split:
        header[3:3] = ["ilgen mode=off s"]
    if args.replay:
        header += ["replay s", "replay/TSan", "HB-only s", "HB-only/TSan"]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    resized = []
    for name, size, med, tbytes, _desc, rsize in rows:
        label = f"{name} ({size})" if rsize in (None, size) else f"{name} ({size}; replay {rsize})"
        cells = [label, fmt_s(med["native"]), fmt_s(med["record"]), fmt_s(med["tsan"]),
                 f"{med['record'] / med['native']:.2f}x", f"{med['record'] / med['tsan']:.2f}x",
                 fmt_bytes(tbytes), fmt_s(med["nograce"]),
                 f"{(med['record'] - med['nograce']) * 1000:+.0f} ms"]
        if args.split:
            cells[3:3] = [fmt_s(med["off"])]
        if args.replay:
            for kind in REPLAY_KINDS:
                if med[kind] is None:
                    cells += ["FAILED", "-"]
                else:
                    cells += [fmt_s(med[kind]), f"{med[kind] / med['tsan_r']:.2f}x"]
            resized.append(f"{name}{f' at {rsize}' if rsize != size else ''} "
                           f"{fmt_s(med['tsan_r'])} s")
        lines.append("| " + " | ".join(cells) + " |")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print("\n".join(lines))
    print()
    metric = "user+sys CPU time" if args.cpu else "wall time"
    print(f"{now}; nproc {nproc()}; CPU: {cpu_model()}; load average {load_avg()}; "
          f"median of {args.runs} runs ({metric}, after one warm-up run); clang-19 -O2 -g; "
          f"trace bytes = median over the recorded runs of the summed file sizes in the trace "
          f"directory; grace off = the record build with exit_grace_ms=0, and the exit grace's "
          f"cost = record - grace off (wall time the threads still running at exit were given).")
    if args.replay:
        steps = ", ".join(f"{name} {med['replay_steps']}" for name, _s, med, _t, _d, _r in rows)
        print(f"Replay: median of {args.replay_runs} runs (after one warm-up run) of the record "
              f"build in mode=replay; replay = the whole recorded order as the schedule (steps: "
              f"{steps}), HB-only = a schedule of 0 steps (the happens-before detector alone); "
              f"ratios against the median of TSan runs at the replay size interleaved with the "
              f"replay runs ({', '.join(resized)}).")
    print("Workloads: " + "; ".join(f"{name}: {desc}" for name, _s, _m, _t, desc, _r in rows) + ".")
    slower = [name for name, _s, med, _t, _d, _r in rows if med["record"] >= med["tsan"]]
    if slower:
        print(f"Target missed: recording is not cheaper than TSan on: {', '.join(slower)}.")
    else:
        print("Target met: recording is cheaper than TSan on every workload.")


if __name__ == "__main__":
    sys.exit(main())
