#!/usr/bin/env python3
"""Real programs end to end: ilgen next to ThreadSanitizer on public multithreaded programs.

Usage: python3 benchmarks/real/real.py [--src DIR] [--runs N] [--out FILE] [NAME ...]

For every program description in `programs/` (one Python file each: how to build the program, its
fixed workload) whose checkout is present under DIR (default `benchmarks/real/src/<checkout>`, a
clone fetched by hand; its code is never committed here), the driver:
  1. copies the checkout's tracked files (`git archive HEAD`) three times and builds it
     natively (clang-19), with `ilgen cc` and with
     `clang-19 -fsanitize=thread`, all at -O2 -g;
  2. runs the workload natively, recorded by ilgen once (`ilgen run`) and once more with the exit
     grace off (`ILGEN_OPTIONS=exit_grace_ms=0`), then `ilgen detect --format json` on the first
     trace (time, and peak RSS through `benchmarks/peak_rss.py`), and under TSan N times;
  3. prints one row: program, commit, workload, native / record / grace-off / TSan seconds, the
     exit grace's cost (record - grace off: the wall time threads still running at exit were
     given), trace size, detect
     seconds and peak RSS, ilgen's confirmed findings by kind, TSan's distinct findings over N runs,
     and the overlap (findings naming the same pair of source lines), and writes every row to
     RESULTS.md (default `benchmarks/real/RESULTS.md`), with the differences listed per program
     (its hand-written section "Differences explained" is kept).
A server (a program description with `client(port, alive)`) gets a free port for `{port}`; the
client drives it from a thread during each run and then ends it, and drives each of `ilgen
detect`'s replays of the recorded run the same way (a replay runs the server again, on the
recorded port: it can only follow the recorded schedule if it gets the same requests). Replays
of a server run one at a time (`ilgen detect --replay-jobs 1`): two at once would both want the
recorded port, and the second would fail to listen. `REVISION` (optional) builds an older commit
of the checkout than HEAD (its submodules stay at theirs). `DETECT_ARGS` (optional) are added to `ilgen
detect`'s flags. `RESET` (optional) is a shell command, run in the data directory (`{data}` in it
is that directory's path), that removes what a run leaves behind for the next (leveldb's database
directory): the driver runs it before every run, and `ilgen detect` before every replay
(`--before-replay`), one replay at a time, as they all share it.
With no checkout present it says so in one line and exits 0 (CI has no network; this is not a
CI step). A build failure or a missing tool names the program and the log; the other programs
are still measured, and the driver exits 2.
"""
import argparse
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path[:0] = [str(HERE.parent), str(HERE), str(HERE / "programs")]
import evaluate  # noqa: E402  (run, clean_env, parse_tsan, findings_to_errors, InputError)

ILGEN = ROOT / "target" / "release" / "ilgen"
PEAK_RSS = HERE.parent / "peak_rss.py"
CC = {"native": "clang-19", "ilgen": f"{ILGEN} cc", "tsan": "clang-19 -fsanitize=thread"}
CXX = {"native": "clang++-19", "ilgen": f"{ILGEN} c++", "tsan": "clang++-19 -fsanitize=thread"}
RUN_TIMEOUT = 600.0
# RESULTS.md from this heading on is written by hand and kept by every new measurement.
EXPLAINED = "## Differences explained"
# A detect that takes longer is a finding of the table (noted in its row), not worth more time
# (a program's module may set its own DETECT_TIMEOUT).
DETECT_TIMEOUT = 420.0
# Then SIGTERM: a detect in its replays prints what the finished ones proved; SIGKILL after this.
DETECT_GRACE = 30.0


@dataclass
class Row:
    name: str
    commit: str
    workload: str
    native: float = 0.0
    record: float = 0.0
    nograce: float = 0.0
    tsan: float = 0.0
    trace_bytes: int = 0
    detect: float = 0.0
    detect_rss_mb: float | None = None
    ilgen: set = field(default_factory=set)
    ilgen_counts: dict = field(default_factory=dict)
    tsan_found: set = field(default_factory=set)
    notes: list = field(default_factory=list)


def load_programs():
    progs = []
    for path in sorted((HERE / "programs").glob("*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        progs.append(mod)
    return progs


def sh(cmd, cwd, log, env=None, timeout=1800):
    with open(log, "ab") as f:
        f.write(f"$ {cmd}\n".encode())
        f.flush()
        r = subprocess.run(cmd, shell=True, cwd=cwd, env=env, stdout=f, stderr=f, timeout=timeout)
    if r.returncode != 0:
        raise evaluate.InputError(f"`{cmd}` failed (exit {r.returncode}) in {cwd}; see {log}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def driven(prog, cmd, notes, port=None, **run_args):
    """evaluate.run of CMD; for a server (a program with `client(port)`), CMD's `{port}` is PORT
    (default a free port) and the client drives it from a thread meanwhile (it ends the server
    when done)."""
    if not hasattr(prog, "client"):
        return evaluate.run(cmd, **run_args)
    port = port or free_port()
    cmd = [a.replace("{port}", str(port)) for a in cmd]
    failed = []

    def drive():
        try:
            prog.client(port)
        except OSError as e:
            failed.append(f"client on port {port}: {e}")

    t = threading.Thread(target=drive)
    t.start()
    r = evaluate.run(cmd, **run_args)
    t.join()
    notes.extend(failed)
    return r


def processes_of(exe):
    """Ids of the running processes whose executable is EXE (a resolved path)."""
    pids = set()
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.readlink(f"/proc/{d}/exe") == exe:
                pids.add(int(d))
        except OSError:
            pass
    return pids


def replay_clients(prog, exe, port, stop, counts):
    """Until STOP: every new process of the server EXE (an `ilgen detect` replay, which runs the
    recorded command line again, so on the recorded PORT) gets one run of the client, as the
    recorded run had: without requests a replay cannot follow the recorded schedule. The client
    gives up once its server is gone, so that no request of one replay reaches the next one.
    COUNTS: replays driven, and those whose client ended with an error (server killed or left the
    schedule)."""
    seen = set()
    while not stop.is_set():
        new = processes_of(exe) - seen
        if not new:
            stop.wait(0.05)
            continue
        pid = min(new)
        seen.add(pid)

        def alive():
            try:
                return not stop.is_set() and os.readlink(f"/proc/{pid}/exe") == exe
            except OSError:
                return False

        counts["driven"] += 1
        try:
            prog.client(port, alive)
        except OSError:
            counts["client error"] += 1
        while alive():
            stop.wait(0.05)


def revision(prog):
    """The commit of the checkout a program is built from: `REVISION` (an older one, where a
    bug fixed since is still in), else HEAD."""
    return getattr(prog, "REVISION", "HEAD")


def build(prog, src, work, flavor):
    """A fresh copy of the checkout built with FLAVOR's compilers; gives the program's path."""
    tree = work / f"build-{flavor}"
    if tree.exists():
        shutil.rmtree(tree)
    # The tracked files only: build products left in a checkout (pigz's has a prebuilt pigz) would
    # make `make` skip the build, and every flavor run the same old binary.
    tree.mkdir(parents=True)
    log = work / f"build-{flavor}.log"
    log.write_text("")
    sh(f"git -C '{src}' archive {revision(prog)} | tar -x -C '{tree}'", work, log)
    # Submodules cloned in place (leveldb's third_party/) are their own repositories: the same.
    modules = subprocess.run(["git", "-C", str(src), "config", "-f", ".gitmodules", "--get-regexp",
                              r"\.path$"], capture_output=True, text=True).stdout.split()[1::2]
    for m in modules:
        if (src / m / ".git").exists():
            sh(f"git -C '{src / m}' archive HEAD | tar -x -C '{tree / m}'", work, log)
    env = evaluate.clean_env(CC=CC[flavor], CXX=CXX[flavor], CFLAGS="-O2 -g", CXXFLAGS="-O2 -g")
    for cmd in prog.build(CC[flavor], CXX[flavor]):
        sh(cmd, tree, log, env)
    return tree / prog.EXE


def measure(prog, src, work, runs):
    commit = subprocess.run(["git", "-C", str(src), "rev-parse", "--short", revision(prog)],
                            capture_output=True, text=True).stdout.strip() or "?"
    row = Row(prog.NAME, commit, prog.WORKLOAD)
    exes = {f: build(prog, src, work, f) for f in ("native", "ilgen", "tsan")}
    data = work / "data"
    data.mkdir(exist_ok=True)
    prog.prepare(data)

    def workload(flavor, i):
        return [a.replace("{exe}", str(exes[flavor])).replace("{data}", str(data))
                .replace("{out}", str(work / f"out-{flavor}-{i}")) for a in prog.ARGV]

    reset = getattr(prog, "RESET", None)
    reset = reset and reset.replace("{data}", str(data))

    def fresh(*args, **kwargs):
        """driven(), after RESET."""
        if reset:
            sh(reset, data, work / "reset.log")
        return driven(*args, **kwargs)

    r = fresh(prog, workload("native", 0), row.notes, cwd=data, env=evaluate.clean_env(),
              timeout=RUN_TIMEOUT, stdout=str(work / "native.out"))
    row.native = r.wall

    def record(name, **options):
        trace = work / name
        if trace.exists():
            shutil.rmtree(trace)
        port = free_port()
        r = fresh(prog, [str(ILGEN), "run", "--out", str(trace), "--timeout", str(RUN_TIMEOUT),
                         "--"] + workload("ilgen", 0), row.notes, port=port, cwd=data,
                  env=evaluate.clean_env(**options), stdout=str(work / f"{name}.out"),
                  stderr=str(work / f"{name}.err"))
        return trace, r.wall, port

    row.nograce = record("trace-nograce", ILGEN_OPTIONS="exit_grace_ms=0")[1]
    trace, row.record, port = record("trace")
    row.trace_bytes = sum(f.stat().st_size for f in trace.glob("*") if f.is_file())
    report = work / "report.json"
    stop, counts = threading.Event(), {"driven": 0, "client error": 0}
    clients = threading.Thread(target=replay_clients,
                               args=(prog, str(exes["ilgen"].resolve()), port, stop, counts))
    if hasattr(prog, "client"):
        clients.start()
    one_at_a_time = ["--replay-jobs", "1"] if hasattr(prog, "client") or reset else []
    if reset:
        one_at_a_time += ["--before-replay", reset]
    detect_timeout = getattr(prog, "DETECT_TIMEOUT", DETECT_TIMEOUT)
    rss = work / "detect.rss"
    rss.unlink(missing_ok=True)
    r = evaluate.run([sys.executable, str(PEAK_RSS), str(rss), str(ILGEN), "detect", "--format",
                      "json"] + one_at_a_time + list(getattr(prog, "DETECT_ARGS", [])) +
                     [str(trace)], cwd=data,
                     env=evaluate.clean_env(), timeout=detect_timeout, stdout=str(report),
                     stderr=str(work / "detect.err"), term_grace=DETECT_GRACE)
    if hasattr(prog, "client"):
        stop.set()
        clients.join()
        row.notes.append(f"replays driven by the client: {counts['driven']} (its requests "
                         f"ended by an error in {counts['client error']})")
    row.detect = r.wall
    row.detect_rss_mb = int(rss.read_text()) / 1024 if rss.exists() else None
    reported = r.rc in (0, 66, 128 + signal.SIGTERM)
    if r.timed_out:
        row.notes.append(f"ilgen detect stopped (SIGTERM) after {detect_timeout:.0f} s: " +
                         ("the findings are those its finished replays confirmed" if reported
                          else "no report (still analysing, or killed)"))
    elif not reported:
        row.notes.append(f"ilgen detect exited {r.rc}: "
                         f"{evaluate.tail(work / 'detect.err', 3).strip()}")
    if reported:
        rep = json.loads(report.read_text())
        row.ilgen = evaluate.findings_to_errors(rep, "")
        for f in rep.get("findings", []):
            row.ilgen_counts[f.get("kind")] = row.ilgen_counts.get(f.get("kind"), 0) + 1
    walls = []
    for i in range(runs):
        err = work / f"tsan-{i}.err"
        r = fresh(prog, workload("tsan", i), row.notes, cwd=data, env=evaluate.clean_env(
            TSAN_OPTIONS="halt_on_error=0 report_signal_unsafe=0"), timeout=RUN_TIMEOUT,
            stdout=str(work / f"tsan-{i}.out"), stderr=str(err))
        walls.append(r.wall)
        found, _ = evaluate.parse_tsan(err.read_text(errors="replace"), "")
        row.tsan_found |= found
    row.tsan = sum(walls) / len(walls)
    return row


def fmt_errs(errs):
    return "; ".join(f"{k} {'/'.join(str(x) for x in sorted(map(str, ls)))}"
                     for k, ls in sorted(errs, key=str)) or "none"


def table(rows, runs):
    head = ("| program | commit | workload | native s | record s | grace off s | exit grace cost "
            "| TSan s | record/TSan | trace MB | detect s | detect MiB | ilgen confirmed "
            "| TSan distinct (N runs) | overlap |")
    out = [head, "|" + "---|" * 15]
    for r in rows:
        counts = ", ".join(f"{v} {k}" for k, v in sorted(r.ilgen_counts.items())) or "0"
        ratio = r.record / r.tsan if r.tsan else 0
        out.append(f"| {r.name} | {r.commit} | {r.workload} | {r.native:.2f} | {r.record:.2f} | "
                   f"{r.nograce:.2f} | {(r.record - r.nograce) * 1000:+.0f} ms | {r.tsan:.2f} | "
                   f"{ratio:.2f} | {r.trace_bytes / 1e6:.1f} | {r.detect:.1f} | "
                   f"{'-' if r.detect_rss_mb is None else f'{r.detect_rss_mb:.0f}'} | {counts} | {len(r.tsan_found)} ({runs}) | "
                   f"{len(r.ilgen & r.tsan_found)} |")
    return "\n".join(out)


def write_results(a, rows, failed, pending, timing):
    text = [f"# Real programs: ilgen next to ThreadSanitizer\n",
            f"Measured by `python3 benchmarks/real/real.py --runs {a.runs}` on "
            f"{evaluate.machine_line()}; {timing} (the machine is shared: times are wall times "
            f"under that load).\n", table(rows, a.runs), "", "## Findings per program", ""]
    for r in rows:
        text.append(f"### {r.name}\n")
        text.append(f"- ilgen (one recorded run): {fmt_errs(r.ilgen)}")
        text.append(f"- TSan ({a.runs} runs): {fmt_errs(r.tsan_found)}")
        text.append(f"- only ilgen: {fmt_errs(r.ilgen - r.tsan_found)}")
        text.append(f"- only TSan: {fmt_errs(r.tsan_found - r.ilgen)}")
        text.extend(f"- note: {n}" for n in r.notes)
        text.append("")
    text.extend(f"- {name}: not measured (build or run failed; see the driver's output)"
                for name in failed)
    text.extend(f"- {name}: not measured yet (the run is under way or was stopped)"
                for name in pending)
    # The hand-written explanations of the differences outlive a new measurement.
    old = a.out.read_text() if a.out.exists() else ""
    kept = old[old.find(EXPLAINED):] if EXPLAINED in old else f"{EXPLAINED}\n\n(none yet)\n"
    a.out.write_text("\n".join(text) + "\n\n" + kept)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", type=Path, default=HERE / "src")
    ap.add_argument("--work", type=Path, default=ROOT / "target" / "real")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args(argv)
    # In the order named (the longest first gives the table its hardest row early), else by file.
    progs = sorted((p for p in load_programs() if not a.names or p.NAME in a.names),
                   key=lambda p: a.names.index(p.NAME) if a.names else 0)
    present = [p for p in progs if (a.src / p.CHECKOUT).is_dir()]
    if not present:
        print(f"real.py: no checkout present under {a.src} (see benchmarks/real/README.md)")
        return 0
    if not ILGEN.exists():
        print(f"real.py: {ILGEN} missing: run `make build` first", file=sys.stderr)
        return 2
    rows, failed = [], []
    load_before = os.getloadavg()
    t0 = time.monotonic()
    for i, p in enumerate(present):
        work = a.work / p.NAME
        work.mkdir(parents=True, exist_ok=True)
        print(f"== {p.NAME}", flush=True)
        try:
            rows.append(measure(p, a.src / p.CHECKOUT, work, a.runs))
            print(table(rows[-1:], a.runs), flush=True)
        except (evaluate.InputError, subprocess.TimeoutExpired) as e:
            print(f"real.py: {p.NAME}: {e}", file=sys.stderr)
            failed.append(p.NAME)
        # After every program, so that a run stopped early still leaves its rows.
        write_results(a, rows, failed, [q.NAME for q in present[i + 1:]],
                      f"the run took {time.monotonic() - t0:.0f} s. Load average (1, 5, 15 min) "
                      f"before: {', '.join(f'{x:.1f}' for x in load_before)}; after: "
                      f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"wrote {a.out}")
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
