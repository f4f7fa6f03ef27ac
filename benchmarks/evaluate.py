#!/usr/bin/env python3
"""Evaluation suite of ilgen: scenarios (Table 1) and applications (Table 2) against ThreadSanitizer.

    evaluate.py check  [--filter SUBSTR] [-j N] [--work DIR]
        every benchmarks/scenarios/*.c: validate its header, build it with `ilgen cc -g -O0`,
        record one run, run `ilgen detect --all-sites --format json` and compare the confirmed
        findings with the header's EXPECT lines; check from `ilgen dump` of the recorded run that
        it hid (REORDER: yes) or showed (REORDER: no) those errors, so that a scenario steered
        with `usleep` still tests prediction. One PASS/FAIL line per scenario (with the share
        of its replays that diverged), a summary; exit 0 all pass, 1 some scenario fails, 2
        harness or input error (bad header, build failure, unusable trace, missing tool).
    evaluate.py table1 [--runs N] [--stability FILE] [--filter SUBSTR] [-j N] [--work DIR]
        the same ilgen result per scenario (and the share of its replays that diverged), plus
        ThreadSanitizer in 1 run and in N runs (union of what the runs report); Markdown table of
        errors found and false reports. With --stability, the results `stability.py --json FILE`
        wrote add "found in k/R single runs" per mode (plain, chaos).
    evaluate.py table2 [--runs N] [--filter SUBSTR] [--apps-dir DIR] [--work DIR]
        every benchmarks/apps/*.c: build native / ilgen / TSan at -O2, time the native, recorded,
        HB-only replayed and TSan runs (median of 3), detect (wall time and peak RSS), and
        tabulate trace and analysis figures (trace bytes per event among them) with the errors
        ilgen and TSan (union over N runs) find. Runs one app at a time (timings).

Header format and the meaning of PASS: benchmarks/scenarios/README.md. Python 3 standard library
only.
"""

import argparse
import concurrent.futures
import datetime
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
SCEN_DIR = BENCH_DIR / "scenarios"
APPS_DIR = BENCH_DIR / "apps"
DEFAULT_WORK = REPO / "target" / "eval"
CLANG = "clang-19"
SCHEDULE_PY = REPO / "tests" / "replay" / "Inputs" / "schedule.py"

RECORD_TIMEOUT = 20.0  # a scenario runs well under 1 s; a hung recorded run is killed, its trace kept
# A scenario whose recorded run hangs by design (ENDS: hang) reaches its hang in milliseconds;
# `ilgen run --timeout` stops it after this long (SIGTERM, so the runtime writes how it ended),
# and its TSan and helgrind runs are cut at the same limit.
HANG_TIMEOUT = 5.0
KILL_GRACE = 2.0  # `ilgen run`'s wait between SIGTERM and SIGKILL
DETECT_TIMEOUT = 300.0
REPLAY_TIMEOUT = 20  # per replay, passed to `ilgen detect --replay-timeout`
TSAN_TIMEOUT = 10.0  # a deadlocked TSan run is killed and counts as reporting nothing
BUILD_TIMEOUT = 180.0
TSAN_OPTIONS = "halt_on_error=0 exitcode=0 second_deadlock_stack=1"

SCENARIO_KEYS = {"SCENARIO", "CATEGORY", "EXPECT", "REORDER", "ARGS", "ENDS"}
ENDINGS = ("exit", "hang", "killed")  # how the recorded run of a scenario ends (ENDS:)
APP_KEYS = {"APP", "CATEGORY", "EXPECT", "REORDER", "ARGS", "LIBS"}


class InputError(Exception):
    """A problem with a scenario/app file or the tools, not a wrong answer of ilgen (exit 2)."""


# An error is (kind, frozenset of lines). Lines of the scenario's own file are ints; a location in
# another file is "basename:line", so that it can never match an EXPECT line.
def line_order(x):
    """Sort key of an error line: the program's own lines by number, then other files' by name."""
    return (1, x, 0) if isinstance(x, str) else (0, "", x)


def fmt_err(err):
    kind, lines = err
    return kind + " " + " ".join(str(x) for x in sorted(lines, key=line_order))


def fmt_errs(errs):
    if not errs:
        return "none"
    return ", ".join(fmt_err(e) for e in sorted(errs, key=fmt_err))


@dataclass
class Header:
    path: Path
    name: str
    title: str = ""
    category: str = ""
    expect: set = field(default_factory=set)
    reorder: str = ""
    ends: str = "exit"
    args: list = field(default_factory=list)
    libs: list = field(default_factory=list)


def parse_header(path, app=False):
    """Reads the leading `//` comment block of PATH; raises InputError naming the file and line."""
    text = path.read_text(errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    keys = APP_KEYS if app else SCENARIO_KEYS
    title_key = "APP" if app else "SCENARIO"
    hdr = Header(path=path, name=path.stem)
    seen = {}
    expect_none = False
    expect_lines = []  # (header line number, error)

    def fail(lineno, msg):
        where = f"{path}:{lineno}" if lineno else str(path)
        raise InputError(f"{where}: {msg}")

    for i, raw in enumerate(lines, 1):
        s = raw.strip()
        if s == "":
            continue
        if not s.startswith("//"):
            break  # end of the leading comment block
        body = s[2:].strip()
        m = re.match(r"^([A-Z][A-Z0-9_]*):(.*)$", body)
        if not m:
            continue  # free text (a continuation of the description)
        key, val = m.group(1), m.group(2).strip()
        if key not in keys:
            fail(i, f"unknown header keyword '{key}:' (expected one of {', '.join(sorted(keys))})")
        if key != "EXPECT" and key in seen:
            fail(i, f"header keyword '{key}:' given twice (first at line {seen[key]})")
        seen.setdefault(key, i)
        if key == title_key:
            if not val:
                fail(i, f"'{key}:' is empty")
            hdr.title = val
        elif key == "CATEGORY":
            if not val or " " in val:
                fail(i, f"'CATEGORY:' must be one word, got '{val}'")
            hdr.category = val
        elif key == "REORDER":
            if val not in ("yes", "no"):
                fail(i, f"'REORDER:' must be 'yes' or 'no', got '{val}'")
            hdr.reorder = val
        elif key == "ENDS":
            if val not in ENDINGS:
                fail(i, f"'ENDS:' must be one of {', '.join(ENDINGS)}, got '{val}'")
            hdr.ends = val
        elif key == "ARGS":
            try:
                hdr.args = shlex.split(val)
            except ValueError as e:
                fail(i, f"'ARGS:' does not parse: {e}")
        elif key == "LIBS":
            hdr.libs = shlex.split(val)
        elif key == "EXPECT":
            words = val.split()
            if not words:
                fail(i, "'EXPECT:' is empty")
            kind = words[0]
            if kind == "none":
                if len(words) != 1:
                    fail(i, "'EXPECT: none' takes no line numbers")
                expect_none = True
                continue
            if kind not in ("race", "deadlock"):
                fail(i, f"'EXPECT:' kind must be race, deadlock or none, got '{kind}'")
            nums = []
            for w in words[1:]:
                if not w.isdigit() or int(w) == 0:
                    fail(i, f"'EXPECT: {kind}': '{w}' is not a line number")
                nums.append(int(w))
            if kind == "race" and len(nums) != 2:
                fail(i, "'EXPECT: race' takes exactly two line numbers (the same twice for one line)")
            if kind == "deadlock" and len(nums) < 1:
                fail(i, "'EXPECT: deadlock' takes the lines of the blocked calls")
            for n in nums:
                if n > len(lines):
                    fail(i, f"line {n} is past the end of the file ({len(lines)} lines)")
                target = lines[n - 1].strip()
                # A block comment's continuation line starts with "*" and a blank (or "*/"); a
                # statement such as "*out = v;" does not.
                block_cont = re.match(r"^\*(\s|/|$)", target) is not None
                if target == "" or target.startswith("//") or target.startswith("/*") or block_cont:
                    fail(i, f"line {n} is blank or a comment: '{target}'")
            err = (kind, frozenset(nums))
            for j, prev in expect_lines:
                if prev == err:
                    fail(i, f"'EXPECT: {fmt_err(err)}' repeats line {j}")
            expect_lines.append((i, err))

    for key in ([title_key, "EXPECT"] + ([] if app else ["CATEGORY", "REORDER"])):
        if key not in seen:
            fail(0, f"header keyword '{key}:' missing from the leading // comment block")
    if app and "ARGS" not in seen:
        fail(0, "header keyword 'ARGS:' missing from the leading // comment block")
    if expect_none and expect_lines:
        fail(seen["EXPECT"], "'EXPECT: none' together with other EXPECT lines")
    if expect_none and hdr.reorder == "yes":
        fail(seen["REORDER"], "'REORDER: yes' with 'EXPECT: none': there is no error to hide")
    hdr.expect = {e for _, e in expect_lines}
    return hdr


# ---------------------------------------------------------------------------------------------
# Running things


@dataclass
class RunResult:
    rc: int
    wall: float
    cpu: float
    timed_out: bool
    maxrss_kb: int = 0  # the largest resident set of the process or a child it waited for


def run(cmd, *, cwd=None, env=None, timeout=None, stdout=None, stderr=None, term_grace=None):
    """Runs CMD in its own process group; on timeout kills the group with SIGKILL (with
    TERM_GRACE seconds: first SIGTERM, then SIGKILL if it still runs after them, so that an
    `ilgen detect` stopped in its replays prints what they proved). Returns the exit status
    (negative: killed by that signal), wall time and user+sys CPU of the process and the children
    it waited for. STDOUT/STDERR: paths (files written) or None (discarded)."""
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    err = open(stderr, "wb") if stderr else subprocess.DEVNULL
    timed_out = threading.Event()
    try:
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True)
        except OSError as e:
            raise InputError(f"cannot run {cmd[0]}: {e}")

        def kill(sig=signal.SIGKILL):
            timed_out.set()
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass

        hard = threading.Timer(term_grace or 0, kill)

        def stop():
            kill(signal.SIGTERM)
            hard.start()

        timer = (threading.Timer(timeout, stop if term_grace else kill) if timeout
                 else None)
        if timer:
            timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            if timer:
                timer.cancel()
            hard.cancel()
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        # whatever the program left running in its group (it was a session leader) goes too
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        return RunResult(p.returncode, wall, ru.ru_utime + ru.ru_stime, timed_out.is_set(),
                         ru.ru_maxrss)
    finally:
        if stdout:
            out.close()
        if stderr:
            err.close()


def clean_env(**extra):
    env = dict(os.environ)
    for k in ("ILGEN_OPTIONS", "TSAN_OPTIONS", "ILGEN_PASS_OPTIONS"):
        env.pop(k, None)
    env.update(extra)
    return env


def tail(path, n=6):
    try:
        lines = Path(path).read_text(errors="replace").strip().split("\n")
    except OSError:
        return ""
    return "\n".join("    " + x for x in lines[-n:])


def build(cmd, log, what):
    r = run(cmd, timeout=BUILD_TIMEOUT, stdout=log, stderr=log)
    if r.rc != 0:
        raise InputError(f"{what}: build failed (exit {r.rc}): {shlex.join(cmd)}\n{tail(log)}")
    warned = Path(log).stat().st_size > 0 and "warning:" in Path(log).read_text(errors="replace")
    return warned


def loc_key(loc, base):
    """A report location -> int line of the scenario file, or 'file:line' for anything else
    ('file:function' at line 0, as `first_frame_in` names TSan's frames without a line).

    >>> loc_key({"file": "/src/sam_internal.h", "line": 0, "function": "dispatch"}, "")
    'sam_internal.h:dispatch'
    >>> loc_key({"file": "/src/sam.c", "line": 4419, "function": "fmt"}, "")
    'sam.c:4419'
    """
    if not isinstance(loc, dict) or "line" not in loc:
        return f"?:site{loc.get('site') if isinstance(loc, dict) else '?'}"
    f = loc.get("file") or "?"
    if os.path.basename(f) == base:
        return int(loc["line"])
    if loc["line"] == 0 and loc.get("function"):
        return f"{os.path.basename(f)}:{loc['function']}"
    return f"{os.path.basename(f)}:{loc['line']}"


def findings_to_errors(report, base):
    errs = set()
    for f in report.get("findings", []):
        if f.get("kind") == "race":
            lines = {loc_key(f["current"].get("location"), base),
                     loc_key(f["previous"].get("location"), base)}
            errs.add(("race", frozenset(lines)))
        elif f.get("kind") == "deadlock":
            lines = {loc_key(b.get("location"), base) for b in f.get("blocked", [])}
            errs.add(("deadlock", frozenset(lines)))
        else:
            errs.add((str(f.get("kind")), frozenset()))
    return errs


def divergence(report):
    """(diverged, replayed) of a JSON report: the replays whose schedule could not be followed
    (verdict infeasible) and all replays, fallback schedules included (`counts.candidates`)."""
    c = report.get("counts", {})
    return c.get("infeasible", 0), c.get("candidates", 0)


def fmt_share(k, n):
    """K of N as "k/n (p%)", or "-" when there is nothing to share."""
    return "-" if n == 0 else f"{k}/{n} ({100 * k / n:.0f}%)"


# ---------------------------------------------------------------------------------------------
# Stability results (`stability.py --json FILE`, read back by `table1 --stability FILE`)
#
# {"format": "ilgen-stability", "version": 1, "runs": R, "chaos_seed": S, "machine": "...",
#  "command": "...", "programs": [{"name", "file", "expect": [error], "modes": {mode: {"single":
#  [[error], one list per recorded run], "union": [error]}}}], "failed": ["message"]}
# where an error is {"kind": "race" | "deadlock" | ..., "lines": [int line of the program's own
# file | "file:line"]}.

STABILITY_FORMAT = ("ilgen-stability", 1)


def err_to_json(err):
    kind, lines = err
    return {"kind": kind, "lines": sorted(lines, key=line_order)}


def err_from_json(obj, where):
    """An error as `err_to_json` wrote it -> (kind, frozenset); ValueError naming WHERE."""
    if not (isinstance(obj, dict) and isinstance(obj.get("kind"), str)
            and isinstance(obj.get("lines"), list)
            and all(isinstance(x, (int, str)) and not isinstance(x, bool) for x in obj["lines"])):
        raise ValueError(f"{where}: not an error {{\"kind\": ..., \"lines\": [...]}}: {obj!r}")
    return obj["kind"], frozenset(obj["lines"])


def load_stability(path):
    """The single-run findings of a `stability.py --json` file: {program name: {mode: [set of
    errors, one per recorded run]}}. InputError naming the file when it is not such a file."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read the stability results: {e.strerror}")
    except ValueError as e:
        raise InputError(f"{path}: the stability results are not JSON: {e}")
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != STABILITY_FORMAT:
        raise InputError(f"{path}: not a stability results file (`stability.py --json`, format "
                         f"{STABILITY_FORMAT[0]} version {STABILITY_FORMAT[1]})")
    out = {}
    programs = data.get("programs")
    try:
        if not isinstance(programs, list):
            raise ValueError("\"programs\" is not a list")
        for i, prog in enumerate(programs):
            where = f"programs[{i}]"
            if not (isinstance(prog, dict) and isinstance(prog.get("name"), str)
                    and isinstance(prog.get("modes"), dict)):
                raise ValueError(f"{where}: not an object with \"name\" and \"modes\"")
            out[prog["name"]] = {}
            for mode, m in prog["modes"].items():
                single = m.get("single") if isinstance(m, dict) else None
                if not isinstance(single, list) or not all(isinstance(r, list) for r in single):
                    raise ValueError(f"{where}.modes.{mode}: needs \"single\", a list of lists")
                out[prog["name"]][mode] = [
                    {err_from_json(e, f"{where}.modes.{mode}.single[{k}]") for e in r}
                    for k, r in enumerate(single)]
    except ValueError as e:
        raise InputError(f"{path}: {e}")
    return out


def runs_finding_all(expect, singles):
    """How many of the single-run error sets SINGLES hold every error of EXPECT."""
    return sum(expect <= s for s in singles)


# ---------------------------------------------------------------------------------------------
# The recorded run: did it hide the errors the scenario is about?
#
# A prediction test is only one if the recorded run did not show the error already: a loaded
# machine can let a `usleep`-steered thread run at the wrong time. So `check` reads the recorded
# trace back (`ilgen dump`) and rebuilds the happens-before order of that run from its sync
# events, taken in the order of their global sequence numbers.

ACCESS_LINE_RE = re.compile(r"^T(\d+) (read|write|atomic_read|atomic_write) (\S+) size=(\d+)"
                            r"(?: at (?:(.*):(\d+):\d+ \S+|(site#\d+)))?$")
SYNC_LINE_RE = re.compile(r"^T(\d+) ([a-z_]+)((?: \S+)*?)(?: seq=(\d+)| PENDING)(?: at .*)?$")
OBJECT_RE = re.compile(r"^(0x[0-9a-f]+|[^+]+)(?:\+(\d+))?$")
# Releases into the object's clock / acquires from it (rwlocks and the rest: see `hb_clocks`).
RELEASES = {"unlock", "spin_unlock", "signal", "broadcast", "barrier_enter", "sem_post"}
ACQUIRES = {"lock", "trylock", "timedlock", "spin_lock", "spin_trylock", "barrier_exit",
            "sem_wait", "sem_trywait", "sem_timedwait"}


@dataclass
class Recorded:
    """The recorded run as `ilgen dump` prints it: how it ended, whether a thread was still
    blocked, and every access of the scenario's file with its thread's vector clock."""
    end: str = ""
    pending: int = 0
    accesses: list = field(default_factory=list)  # (line, tid, kind, base, offset, size, clock)


def parse_dump(text, base):
    """`ilgen dump` text -> Recorded; raises ValueError on a line it does not understand."""
    rec = Recorded()
    events = {}  # tid -> [("acc", ...) | ("sync", op, words, seq)]
    for ln in text.split("\n"):
        if ln.startswith("run "):
            m = re.search(r" end=(.*) threads=\d+$", ln)
            rec.end = m.group(1) if m else "?"
            continue
        if not ln or re.match(r"^T\d+ thread ", ln):
            continue
        m = ACCESS_LINE_RE.match(ln)
        if m:
            tid, kind, obj, size, path, line, site_id = m.groups()
            if site_id:
                raise ValueError(f"{site_id} has no source line (was the binary rebuilt?): {ln}")
            o = OBJECT_RE.match(obj)
            if not o:
                raise ValueError(f"object '{obj}' in: {ln}")
            b = int(o.group(1), 16) if o.group(1).startswith("0x") else o.group(1)
            here = path is not None and os.path.basename(path) == base
            events.setdefault(int(tid), []).append(
                ("acc", int(line) if here else None, kind, b, int(o.group(2) or 0), int(size)))
            continue
        m = SYNC_LINE_RE.match(ln)
        if not m:
            raise ValueError(f"unknown line: {ln}")
        tid, op, words, seq = m.groups()
        if seq is None:
            rec.pending += 1
        events.setdefault(int(tid), []).append(("sync", op, words.split(), seq and int(seq)))
    rec.accesses = hb_clocks(events)
    return rec


def hb_clocks(events):
    """The accesses of EVENTS (per thread, program order) at a line of the scenario, each with the
    vector clock of its thread under the happens-before order of the recorded run: program order,
    fork -> start, end -> join, release -> later acquire of the same object (unlock -> lock,
    including a cond wait's release and its wake's reacquisition of the mutex, signal/broadcast ->
    wake unless timed out, barrier enter -> exit, sem post -> wait), rwlock write unlock -> any
    later lock, read unlock -> later write lock. Atomic accesses add no order: the acquire and
    release records of atomics (`acquire`, `release_store`, `release_rmw`) are taken as sync events
    that order nothing, as the scenarios' REORDER lines were written without them. Pending (still
    blocked) operations acquire nothing."""
    syncs = sorted((ev[3], tid, i) for tid, evs in events.items()
                   for i, ev in enumerate(evs) if ev[0] == "sync" and ev[3] is not None)
    clock = {tid: {tid: 1} for tid in events}
    done = {tid: 0 for tid in events}  # events of the thread already given a clock
    objs, forks, ends = {}, {}, {}
    rw_mode = {}  # (tid, lock) -> ["r"|"w", ...] held modes, innermost last
    out = []

    def join_into(c, other):
        for k, v in other.items():
            if c.get(k, 0) < v:
                c[k] = v

    def upto(tid, stop):
        evs = events[tid]
        while done[tid] < stop:
            ev = evs[done[tid]]
            if ev[0] == "acc" and ev[1] is not None:
                out.append((ev[1], tid, ev[2], ev[3], ev[4], ev[5], dict(clock[tid])))
            done[tid] += 1

    for _, tid, i in syncs:
        upto(tid, i)
        _, op, words, _ = events[tid][i]
        c = clock[tid]
        obj = words[0] if words else None
        ok = "failed" not in words
        if op == "fork":
            forks[words[0]] = dict(c)
        elif op == "start":
            join_into(c, forks.get(f"T{tid}", {}))
        elif op == "end":
            ends[f"T{tid}"] = dict(c)
        elif op == "join":
            join_into(c, ends.get(words[0], {}))
        elif op in RELEASES:
            join_into(objs.setdefault(obj, {}), c)
        elif op in ACQUIRES and ok:
            join_into(c, objs.get(obj, {}))
        elif op == "wait":  # the mutex is released while waiting
            join_into(objs.setdefault(words[1].removeprefix("mutex="), {}), c)
        elif op == "wake":
            join_into(c, objs.get(words[1].removeprefix("mutex="), {}))
            if "timed_out" not in words:
                join_into(c, objs.get(obj, {}))
        elif op in ("rdlock", "tryrdlock") and ok:
            join_into(c, objs.get((obj, "w"), {}))
            rw_mode.setdefault((tid, obj), []).append("r")
        elif op in ("wrlock", "trywrlock") and ok:
            join_into(c, objs.get((obj, "w"), {}))
            join_into(c, objs.get((obj, "r"), {}))
            rw_mode.setdefault((tid, obj), []).append("w")
        elif op == "rwunlock":
            held = rw_mode.get((tid, obj)) or ["w"]
            join_into(objs.setdefault((obj, held.pop()), {}), c)
        c[tid] = c.get(tid, 0) + 1
        done[tid] = i + 1
    for tid, evs in events.items():
        upto(tid, len(evs))
    return out


def unordered_pair(rec, lines):
    """Whether the recorded run has two accesses at LINES in two threads, to overlapping bytes, at
    least one a write and not both atomic, that no happens-before edge orders. Any two of the
    race's lines, not only one at each: the runtime keeps one record per address, kind and
    segment (between two sync events of the thread), so a read on one line followed by a write on
    the other in the same segment is recorded as the write alone (s09's check and store)."""
    accs = [x for x in rec.accesses if x[0] in lines]
    for i, (_, ta, ka, ba, oa, sa, ca) in enumerate(accs):
        for _, tb, kb, bb, ob, sb, cb in accs[i + 1:]:
            if ta == tb or ba != bb or oa + sa <= ob or ob + sb <= oa:
                continue
            if "write" not in ka and "write" not in kb:
                continue
            if ka.startswith("atomic") and kb.startswith("atomic"):
                continue
            if ca[ta] > cb.get(ta, 0) and cb[tb] > ca.get(tb, 0):
                return True
    return False


def observed_errors(rec, expect):
    """The EXPECT errors the recorded run REC showed directly: a race whose lines have an
    unordered conflicting pair of accesses, a deadlock when the run did not exit or a thread was
    still blocked in a sync operation at its end."""
    shown = set()
    for err in expect:
        kind, lines = err
        if kind == "race":
            if unordered_pair(rec, lines):
                shown.add(err)
        elif rec.end != "exit" or rec.pending:
            shown.add(err)
    return shown


@dataclass
class IlgenResult:
    found: set = field(default_factory=set)
    notes: list = field(default_factory=list)
    error: str = ""  # harness/input error: no verdict
    time: float = 0.0
    report: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    record_runs: list = field(default_factory=list)
    detect_wall: float = 0.0
    detect_cpu: float = 0.0
    detect_rss_kb: int = 0
    observed: set = field(default_factory=set)  # EXPECT errors the recorded run showed directly


def ilgen_bin(args):
    p = Path(args.ilgen)
    if not p.is_file():
        raise InputError(f"{p} missing: run `make build`")
    return str(p)


def time_limit(hdr, limit):
    """LIMIT for one run of HDR's program, cut to HANG_TIMEOUT when the program hangs by design."""
    return min(limit, HANG_TIMEOUT) if hdr.ends == "hang" else limit


def ilgen_run(ilgen, hdr, exe, out, wdir, name, chaos=None):
    """Records one run of EXE into OUT with `ilgen run --timeout` (HDR's time limit: a run that
    hangs is stopped with SIGTERM, and its trace says how it ended), perturbed with `--chaos=CHAOS`
    when given; WDIR/NAME.stdout and .stderr get the output. Gives the RunResult: its rc is
    `ilgen run`'s, the program's status, 124 when the time limit stopped it, 128+N for signal N."""
    limit = time_limit(hdr, RECORD_TIMEOUT)
    cmd = [ilgen, "run", "--timeout", str(limit), "--out", str(out)]
    if chaos is not None:
        cmd.append(f"--chaos={chaos}")
    return run(cmd + ["--", str(exe)] + hdr.args, cwd=wdir, env=clean_env(),
               timeout=limit + KILL_GRACE + 5, stdout=wdir / f"{name}.stdout",
               stderr=wdir / f"{name}.stderr")


def recorded_end(r, via_ilgen_run):
    """How the recorded run R ended, as ENDS spells it ("exit" for any status), and in words."""
    if r.timed_out:
        return "hang", f"killed after {RECORD_TIMEOUT:.0f} s"
    if via_ilgen_run and r.rc == 124:
        return "hang", "stopped by `ilgen run --timeout`"
    if r.rc < 0 or (via_ilgen_run and r.rc > 128):
        return "killed", f"killed by signal {-r.rc if r.rc < 0 else r.rc - 128}"
    return "exit", f"exited {r.rc}"


def record_and_detect(hdr, wdir, exe, ilgen, record_runs=1):
    """Records RECORD_RUNS runs of EXE (the last trace is kept) and detects on the last one. A
    program that hangs by design (ENDS: hang) is recorded with `ilgen run --timeout`; a note
    fails the scenario when the run did not end as ENDS says (exit: with status 0)."""
    res = IlgenResult()
    base = hdr.path.name
    trace = wdir / "trace"
    via_ilgen_run = hdr.ends == "hang"
    for k in range(record_runs):
        if trace.exists():
            shutil.rmtree(trace)
        if via_ilgen_run:
            r = ilgen_run(ilgen, hdr, exe, trace, wdir, "record")
        else:
            r = run([str(exe)] + hdr.args, cwd=wdir,
                    env=clean_env(ILGEN_OPTIONS=f"trace_dir={trace}"), timeout=RECORD_TIMEOUT,
                    stdout=wdir / "record.stdout", stderr=wdir / "record.stderr")
        res.record_runs.append(r)
    ending, how = recorded_end(r, via_ilgen_run)
    if ending != hdr.ends:
        res.notes.append(f"recorded run {how}" + ("" if hdr.ends == "exit" else
                                                  f"; its header says ENDS: {hdr.ends}"))
    elif ending == "exit" and r.rc != 0:
        res.notes.append(f"recorded run {how}")
    if not trace.is_dir():
        res.error = f"{hdr.path}: the recorded run left no trace in {trace}"
        return res
    report_path = wdir / "detect.json"
    d = run([ilgen, "detect", "--all-sites", "--format", "json", "--replay-timeout",
             str(REPLAY_TIMEOUT), str(trace)], cwd=wdir, env=clean_env(), timeout=DETECT_TIMEOUT,
            stdout=report_path, stderr=wdir / "detect.stderr")
    res.detect_wall, res.detect_cpu, res.detect_rss_kb = d.wall, d.cpu, d.maxrss_kb
    if d.timed_out:
        res.error = f"{hdr.path}: ilgen detect killed after {DETECT_TIMEOUT:.0f} s"
        return res
    if d.rc not in (0, 66):
        res.error = (f"{hdr.path}: ilgen detect exited {d.rc} (trace {trace})\n"
                     f"{tail(wdir / 'detect.stderr')}")
        return res
    try:
        res.report = json.loads(report_path.read_text())
    except (OSError, ValueError) as e:
        res.error = f"{hdr.path}: ilgen detect's JSON report does not parse: {e}"
        return res
    try:
        res.stats = json.loads((trace / "candidates.json").read_text())
    except (OSError, ValueError):
        res.stats = {}
    res.found = findings_to_errors(res.report, base)
    c = res.report.get("counts", {})
    if c.get("failed"):
        res.notes.append(f"{c['failed']} candidate(s) failed in replay")
    return res


def recorded_order(hdr, wdir, ilgen, res):
    """Sets RES.observed from `ilgen dump` of the trace and adds a failing "recorded run" note when
    it contradicts REORDER (yes: the run must hide every EXPECT error, no: show every one); gives
    a harness error message, or "" when the dump was read."""
    dump = wdir / "trace.dump"
    d = run([ilgen, "dump", str(wdir / "trace")], cwd=wdir, env=clean_env(), timeout=DETECT_TIMEOUT,
            stdout=dump, stderr=wdir / "dump.stderr")
    if d.rc != 0:
        return f"{hdr.path}: ilgen dump exited {d.rc}\n{tail(wdir / 'dump.stderr')}"
    try:
        rec = parse_dump(dump.read_text(errors="replace"), hdr.path.name)
    except ValueError as e:
        return f"{hdr.path}: {dump} does not parse: {e}"
    res.observed = observed_errors(rec, hdr.expect)
    for err in sorted(hdr.expect, key=fmt_err):
        what = "the " + fmt_err(err).replace(" ", "/").replace("/", " ", 1)  # "the race 34/44"
        if err[0] == "race" and not any(x[0] in err[1] for x in rec.accesses):
            # Hiding what was never recorded would pass vacuously.
            res.notes.append(f"recorded run has no access at the lines of {what}")
        elif hdr.reorder == "yes" and err in res.observed:
            res.notes.append(f"recorded run observed {what}: the scenario no longer tests "
                             f"prediction; lengthen its usleep or mark it observed (REORDER: no)")
        elif hdr.reorder == "no" and err not in res.observed:
            res.notes.append(f"recorded run hid {what}, which REORDER: no says it shows: "
                             f"change its steering or mark it hidden (REORDER: yes)")
    return ""


def ilgen_scenario(hdr, args):
    t0 = time.monotonic()
    wdir = Path(args.work) / "scenarios" / hdr.name
    if wdir.exists():
        shutil.rmtree(wdir)
    wdir.mkdir(parents=True)
    ilgen = ilgen_bin(args)
    exe = wdir / hdr.name
    try:
        warned = build([ilgen, "cc", "-g", "-O0", "-Wall", str(hdr.path), "-o", str(exe),
                        "-lpthread"] + hdr.libs, wdir / "build.log", str(hdr.path))
    except InputError as e:
        return IlgenResult(error=str(e), time=time.monotonic() - t0)
    res = record_and_detect(hdr, wdir, exe, ilgen)
    if not res.error:
        res.error = recorded_order(hdr, wdir, ilgen, res)
    if warned:
        res.notes.append(f"compiler warnings: {wdir / 'build.log'}")
    res.time = time.monotonic() - t0
    return res


# ---------------------------------------------------------------------------------------------
# ThreadSanitizer reports

# The function may have spaces (a C++ name: `ugu(int, Third&)`, `std::function<void (int)>::...`):
# the file is the first `path:line` token after it.
FRAME_RE = re.compile(r"^\s*#\d+\s+(.+?)\s+(\S+?):(\d+)(?::\d+)?(?:\s|$)")
ACCESS_RE = re.compile(r"^\s+(?:Previous )?(?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite) of size")
ACQUIRE_RE = re.compile(r"^\s+Mutex \S+ acquired here while holding")


# A frame whose code has no line in the debug info (line 0, common at -O2): `#0 fn /src/f.c (m+0x..)`.
LINELESS_FRAME_RE = re.compile(r"^\s*#\d+\s+(.+?)\s+(/\S+)\s+\(")


def first_frame_in(block, base):
    """The first (innermost) frame of a stack that lies in the scenario's file, as an error line.
    Elsewhere (real programs, BASE ""): `file:line`, or `file:function` for a frame without a
    line (never the caller's line instead: that would name a line that did not race).

    >>> first_frame_in(["    #0 ugu(int, Third&) /src/example.cpp:29:81 (ex+0xeadba)"], "")
    'example.cpp:29'
    >>> first_frame_in(["    #0 __tsan_memcpy <null> (ex+0x61e2e)",
    ...     "    #1 std::function<void (int)>::swap(std::function<void (int)>&) "
    ...     "/usr/include/c++/12/bits/std_function.h:558:2 (ex+0xf79e3)",
    ...     "    #2 ctpl::thread_pool::pop() /src/./ctpl_stl.h:135:19 (ex+0xf79e3)"], "")
    'ctpl_stl.h:135'
    >>> first_frame_in(["    #0 main /src/example.cpp (ex+0xec4ba)"], "")
    'example.cpp:main'
    >>> first_frame_in(["    #0 deposit /src/s01_bank.c:33:5 (s01+0x1234)"], "s01_bank.c")
    33
    """
    first_other = None
    for ln in block:
        m = FRAME_RE.match(ln)
        lineless = None if m else LINELESS_FRAME_RE.match(ln)
        if lineless and first_other is None and not lineless.group(2).startswith("/usr/"):
            first_other = f"{os.path.basename(lineless.group(2))}:{lineless.group(1)}"
        if not m:
            continue
        f, line = m.group(2), int(m.group(3))
        if os.path.basename(f) == base:
            return line
        if first_other is None and f not in ("<null>",) and not f.startswith("/usr/"):
            first_other = f"{os.path.basename(f)}:{line}"
    return first_other or "?"


def parse_tsan(stderr_text, base):
    """Data races -> ('race', {line, line}); lock-order inversions -> ('deadlock', {lines where a
    mutex is acquired while holding another}). Other report kinds are counted, not compared."""
    errs, other = set(), 0
    reports = re.split(r"^==================$", stderr_text, flags=re.M)
    for rep in reports:
        lines = rep.split("\n")
        head = next((x for x in lines if x.startswith("WARNING: ThreadSanitizer:")), None)
        if head is None:
            continue
        if "data race" in head or "lock-order-inversion" in head:
            sec_re = ACCESS_RE if "data race" in head else ACQUIRE_RE
            stacks, cur = [], None
            for ln in lines:
                if sec_re.match(ln):
                    cur = []
                    stacks.append(cur)
                elif cur is not None:
                    if ln.strip() == "" or not ln.strip().startswith("#"):
                        cur = None
                    else:
                        cur.append(ln)
            locs = {first_frame_in(s, base) for s in stacks}
            errs.add(("race" if "data race" in head else "deadlock", frozenset(locs)))
        else:
            other += 1
    return errs, other


HG_FRAME_RE = re.compile(r"(?:at|by) 0x[0-9A-Fa-f]+: .*?\((\S+?):(\d+)\)\s*$")
HELGRIND_TIMEOUT = 120.0


def first_hg_frame(block, base):
    """The innermost frame of a helgrind stack that lies in the scenario's file, as an error line."""
    for ln in block:
        m = HG_FRAME_RE.search(ln)
        if m and os.path.basename(m.group(1)) == base:
            return int(m.group(2))
    return "?"


def parse_helgrind(text, base):
    """Helgrind's "Possible data race" -> ('race', {line, line}) (the access and the conflicting
    previous one); its lock-order violations -> ('deadlock', {lines of the later acquisitions},
    the calls that would block). Other error kinds are counted, not compared."""
    errs, other = set(), 0
    body = [re.sub(r"^==\d+== ?", "", ln) for ln in text.split("\n") if ln.startswith("==")]
    reports, cur = [], []
    for ln in body:
        if ln.startswith("----------------------------------------------------------------"):
            reports.append(cur)
            cur = []
        else:
            cur.append(ln)
    reports.append(cur)
    for rep in reports:
        start = next((i for i, ln in enumerate(rep) if "Possible data race" in ln), None)
        if start is not None:
            # The report may first describe the locks held ("Lock at ... was first observed",
            # with their init stacks): the access's stack follows the "Possible data race" line.
            split = next((i for i, ln in enumerate(rep) if i > start
                          and ln.startswith("This conflicts with")), len(rep))
            lines = {first_hg_frame(rep[start:split], base), first_hg_frame(rep[split:], base)}
            errs.add(("race", frozenset(lines)))
        elif any("lock order" in ln and "violated" in ln for ln in rep):
            starts = [i for i, ln in enumerate(rep) if "followed by a later acquisition" in ln]
            lines = {first_hg_frame(rep[i + 1:], base) for i in starts}
            errs.add(("deadlock", frozenset(lines)))
        elif any(ln.startswith("Thread #") for ln in rep) and not any(
                "Thread-Announcement" in ln or "was created" in ln for ln in rep):
            other += 1
    return errs, other


def helgrind_run(hdr, wdir):
    """Builds the scenario for valgrind (DWARF 4: valgrind 3.19 reads no DWARF 5) and runs it once
    under helgrind; gives its errors aligned to EXPECT, or None when it timed out."""
    exe = wdir / (hdr.name + ".hg")
    build([CLANG, "-gdwarf-4", "-O1", str(hdr.path), "-o", str(exe), "-lpthread"] + hdr.libs,
          wdir / "build-hg.log", str(hdr.path))
    errf = wdir / "helgrind.stderr"
    r = run(["valgrind", "--tool=helgrind"] + [str(exe)] + hdr.args, cwd=wdir, env=clean_env(),
            timeout=time_limit(hdr, HELGRIND_TIMEOUT), stdout=wdir / "helgrind.stdout",
            stderr=errf)
    if r.timed_out:
        return set()  # a hung (deadlocked) run reports nothing
    errs, _ = parse_helgrind(errf.read_text(errors="replace"), hdr.path.name)
    return align_deadlocks(hdr.expect, errs)


def align_deadlocks(expect, errs):
    """TSan names a lock-order inversion by the lines that acquire a lock while holding another;
    EXPECT names a deadlock by the lines every blocked thread waits in (joins included). A TSan
    report counts as the expected deadlock whose lines include all of its lines."""
    out = set()
    for kind, lines in errs:
        match = next((e for e in sorted(expect, key=fmt_err)
                      if kind == "deadlock" and e[0] == "deadlock" and lines <= e[1]), None)
        out.add(match or (kind, lines))
    return out


def hb_only_replays(hdr, wdir, exe, n):
    """Replays the recorded trace in WDIR/trace N times under an HB-only schedule (no steps;
    tests/replay/Inputs/schedule.py writes it); gives the runs that ended with an outcome, and a
    note when one did not (its time is left out)."""
    schedule = wdir / "hbonly.json"
    w = run([sys.executable, str(SCHEDULE_PY), str(wdir / "trace")], cwd=wdir, env=clean_env(),
            timeout=DETECT_TIMEOUT, stdout=schedule, stderr=wdir / "schedule.stderr")
    if w.rc != 0:
        return [], f"HB-only schedule not written: {tail(wdir / 'schedule.stderr', 2)}"
    done, failed = [], 0
    for k in range(n):
        outcome = wdir / f"replay-{k}"
        shutil.rmtree(outcome, ignore_errors=True)
        opts = f"mode=replay:schedule={schedule}:outcome_dir={outcome}"
        r = run([str(exe)] + hdr.args, cwd=wdir, env=clean_env(ILGEN_OPTIONS=opts),
                timeout=RECORD_TIMEOUT * 6, stdout=wdir / "replay.stdout",
                stderr=wdir / "replay.stderr")
        if r.timed_out or not (outcome / "replay-outcome.json").is_file():
            failed += 1
        else:
            done.append(r)
    return done, f"{failed} of {n} HB-only replays left no outcome" if failed else ""


def tsan_runs(hdr, wdir, exe, runs, timed=0):
    """Runs the TSan build RUNS times; returns the per-run error sets and the timed runs."""
    per_run, timings, other = [], [], 0
    for k in range(runs):
        errf = wdir / f"tsan-{k}.stderr"
        r = run([str(exe)] + hdr.args, cwd=wdir, env=clean_env(TSAN_OPTIONS=TSAN_OPTIONS),
                timeout=time_limit(hdr, TSAN_TIMEOUT) if not timed else RECORD_TIMEOUT * 6,
                stdout=wdir / "tsan.stdout", stderr=errf)
        if k < timed:
            timings.append(r)
        if r.timed_out:
            per_run.append(set())  # a hung (deadlocked) run reports nothing
            continue
        errs, o = parse_tsan(errf.read_text(errors="replace"), hdr.path.name)
        other += o
        per_run.append(align_deadlocks(hdr.expect, errs))
    return per_run, timings, other


# ---------------------------------------------------------------------------------------------
# Subcommands


def load_headers(dirpath, flt, app=False):
    """The headers of the programs in DIRPATH whose name contains FLT, and the header errors;
    InputError when none matches."""
    files = [f for f in sorted(Path(dirpath).glob("*.c")) if flt in f.name]
    if not files:
        raise InputError(f"no {'application' if app else 'scenario'} matches in {dirpath}")
    headers, errors = [], []
    for f in files:
        try:
            headers.append(parse_header(f, app=app))
        except InputError as e:
            errors.append(str(e))
    return headers, errors


def verdict(hdr, found):
    matched = hdr.expect & found
    return matched, hdr.expect - found, found - hdr.expect


def cmd_check(args):
    headers, errors = load_headers(args.scenarios_dir, args.filter)
    n_files = len(headers) + len(errors)
    for e in errors:
        print(f"ERROR {e}")
    ilgen_bin(args)
    width = max(len(h.name) for h in headers) if headers else 10
    n_pass = n_fail = 0
    tot = {"expected": 0, "matched": 0, "missed": 0, "extra": 0, "shown": 0, "diverged": 0,
           "replayed": 0}
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [(h, ex.submit(ilgen_scenario, h, args)) for h in headers]
        for h, fut in futs:
            res = fut.result()
            if res.error:
                errors.append(res.error)
                print(f"ERROR {h.name:<{width}}  {res.error}")
                continue
            matched, missed, extra = verdict(h, res.found)
            ok = not missed and not extra and not any(n.startswith("recorded run") for n in res.notes)
            tot["expected"] += len(h.expect)
            tot["matched"] += len(matched)
            tot["missed"] += len(missed)
            tot["extra"] += len(extra)
            tot["shown"] += len(res.observed)
            diverged, replayed = divergence(res.report)
            tot["diverged"] += diverged
            tot["replayed"] += replayed
            line = (f"{'PASS' if ok else 'FAIL'} {h.name:<{width}}  expected: {fmt_errs(h.expect)}"
                    f"  found: {fmt_errs(res.found)}")
            if missed:
                line += f"  MISSED: {fmt_errs(missed)}"
            if extra:
                line += f"  EXTRA: {fmt_errs(extra)}"
            if res.notes:
                line += "  (" + "; ".join(res.notes) + ")"
            line += f"  [diverged {fmt_share(diverged, replayed)}; {res.time:.1f} s]"
            print(line, flush=True)
            n_pass += ok
            n_fail += not ok
    print(f"\n{n_files} scenario(s): {n_pass} passed, {n_fail} failed, {len(errors)} error(s); "
          f"expected errors {tot['expected']}: {tot['matched']} found, {tot['missed']} missed; "
          f"{tot['extra']} false report(s); the recorded runs hid "
          f"{tot['expected'] - tot['shown']} and showed {tot['shown']}; replays diverged "
          f"{fmt_share(tot['diverged'], tot['replayed'])}; {time.monotonic() - t0:.1f} s")
    if errors:
        return 2
    return 1 if n_fail else 0


def machine_line():
    model = "?"
    try:
        for ln in Path("/proc/cpuinfo").read_text().split("\n"):
            if ln.startswith("model name"):
                model = ln.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"Machine: {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), {model}; "
            f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")


def table1_scenario(hdr, args):
    res = ilgen_scenario(hdr, args)
    if res.error:
        return res, None, None, None
    wdir = Path(args.work) / "scenarios" / hdr.name
    exe = wdir / (hdr.name + ".tsan")
    try:
        build([CLANG, "-g", "-O1", "-fsanitize=thread", str(hdr.path), "-o", str(exe), "-lpthread"]
              + hdr.libs, wdir / "build-tsan.log", str(hdr.path))
        helgrind = helgrind_run(hdr, wdir) if args.helgrind else set()
    except InputError as e:
        res.error = str(e)
        return res, None, None, None
    per_run, _, _ = tsan_runs(hdr, wdir, exe, args.runs)
    union = set().union(*per_run) if per_run else set()
    return res, per_run[0] if per_run else set(), union, helgrind


def cmd_table1(args):
    headers, errors = load_headers(args.scenarios_dir, args.filter)
    ilgen_bin(args)
    stability = load_stability(args.stability) if args.stability else {}
    modes = list(dict.fromkeys(m for prog in stability.values() for m in prog))
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [(h, ex.submit(table1_scenario, h, args)) for h in headers]
        for h, fut in futs:
            res, one, union, helgrind = fut.result()
            if res.error:
                errors.append(res.error)
                continue
            rows.append((h, res, one, union, helgrind))
            print(f"  {h.name}: done ({res.time:.1f} s ilgen)", file=sys.stderr, flush=True)
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    n = args.runs
    print(machine_line())
    print(f"ilgen: one recorded run (`ilgen cc -g -O0`, `detect --all-sites`); TSan: "
          f"`{CLANG} -g -O1 -fsanitize=thread`, TSAN_OPTIONS=\"{TSAN_OPTIONS}\", 1 run and the "
          f"union of {n} runs ({TSAN_TIMEOUT:.0f} s timeout each); helgrind: `valgrind "
          f"--tool=helgrind` on `{CLANG} -gdwarf-4 -O1`, 1 run. found = real errors reported, "
          f"false = reports matching no EXPECT line; ilgen diverged = its replays whose schedule "
          f"could not be followed (verdict infeasible), of all its replays (fallback schedules "
          f"included).")
    if stability:
        print(f"found in k/R single runs (from `stability.py --json`, {args.stability}): the "
              f"recorded runs, one `ilgen detect` each, that found every real error of the "
              f"scenario (- for a scenario without errors or not in the file); "
              f"{', '.join(modes)}.")
    print()
    stab_cols = [f"found in k/R single runs ({m})" for m in modes]
    print("| scenario | category | reorder | real errors | ilgen found | ilgen false | "
          "ilgen diverged | " + "".join(c + " | " for c in stab_cols) +
          f"TSan 1 run found | TSan 1 run false | TSan {n} runs found | TSan {n} runs false | "
          f"helgrind found | helgrind false |")
    print("|---|---|---|" + "--:|" * (10 + len(modes)))
    tot = [0] * 9
    tot_div = [0, 0]
    tot_stab = {m: [0, 0] for m in modes}
    for h, res, one, union, helgrind in rows:
        cells = [len(h.expect)]
        for s in (res.found, one, union, helgrind):
            cells += [len(h.expect & s), len(s - h.expect)]
        tot = [a + b for a, b in zip(tot, cells)]
        diverged, replayed = divergence(res.report)
        tot_div = [tot_div[0] + diverged, tot_div[1] + replayed]
        stab = []
        for m in modes:
            singles = stability.get(h.name, {}).get(m)
            if not h.expect or singles is None:
                stab.append("-")
                continue
            k = runs_finding_all(h.expect, singles)
            tot_stab[m] = [tot_stab[m][0] + k, tot_stab[m][1] + len(singles)]
            stab.append(f"{k}/{len(singles)}")
        texts = [str(c) for c in cells[:3]] + [fmt_share(diverged, replayed)] + stab + [
            str(c) for c in cells[3:]]
        print(f"| {h.name} | {h.category} | {h.reorder} | " + " | ".join(texts) + " |")
    texts = ([str(c) for c in tot[:3]] + [fmt_share(*tot_div)]
             + [f"{k}/{r}" for k, r in tot_stab.values()] + [str(c) for c in tot[3:]])
    print(f"| **total ({len(rows)})** | | | " + " | ".join(f"**{x}**" for x in texts) + " |")
    return 2 if errors else 0


def loc_lines(errs):
    return {x for _, lines in errs for x in lines}


def cmd_table2(args):
    headers, errors = load_headers(args.apps_dir, args.filter, app=True)
    ilgen = ilgen_bin(args)
    runs = max(args.runs, 3)
    rows = []
    for h in headers:
        wdir = Path(args.work) / "apps" / h.name
        if wdir.exists():
            shutil.rmtree(wdir)
        wdir.mkdir(parents=True)
        src = str(h.path)
        try:
            loc = sum(1 for ln in h.path.read_text(errors="replace").split("\n") if ln.strip())
            nat, rec, tsn = wdir / (h.name + ".native"), wdir / h.name, wdir / (h.name + ".tsan")
            libs = ["-lpthread"] + h.libs
            build([CLANG, "-O2", "-g", src, "-o", str(nat)] + libs, wdir / "build-native.log", src)
            build([ilgen, "cc", "-O2", "-g", src, "-o", str(rec)] + libs, wdir / "build-ilgen.log", src)
            build([CLANG, "-O2", "-g", "-fsanitize=thread", src, "-o", str(tsn)] + libs,
                  wdir / "build-tsan.log", src)
        except InputError as e:
            errors.append(str(e))
            continue
        print(f"  {h.name}: timing", file=sys.stderr, flush=True)
        native = []
        for k in range(3):
            r = run([str(nat)] + h.args, cwd=wdir, env=clean_env(), timeout=RECORD_TIMEOUT * 6,
                    stdout=wdir / "native.stdout", stderr=wdir / "native.stderr")
            if r.rc != 0:
                errors.append(f"{h.path}: native run exited {r.rc}")
            native.append(r)
        res = record_and_detect(h, wdir, rec, ilgen, record_runs=3)
        if res.error:
            errors.append(res.error)
            continue
        trace_bytes = sum(f.stat().st_size for f in (wdir / "trace").glob("*.trace"))
        replays, replay_note = hb_only_replays(h, wdir, rec, 3)
        if replay_note:
            res.notes.append(replay_note)
        per_run, tsan_t, other = tsan_runs(h, wdir, tsn, runs, timed=3)
        tsan_union = set().union(*per_run)
        st = res.stats.get("stats", {})
        flt, slv = st.get("filter", {}), st.get("solve", {})
        med = lambda rs, attr: statistics.median(getattr(r, attr) for r in rs)
        nw, nc = med(native, "wall"), med(native, "cpu")
        rw, rc = med(res.record_runs, "wall"), med(res.record_runs, "cpu")
        tw, tc = med(tsan_t, "wall"), med(tsan_t, "cpu")
        pc = med(replays, "cpu") if replays else None
        events = st.get("accesses_read", 0) + st.get("sync_events", 0)
        counts = res.report.get("counts", {})
        confirmed = counts.get("confirmed_races", 0) + counts.get("confirmed_deadlocks", 0)
        rows.append(dict(
            name=h.name, loc=loc, threads=st.get("threads", "?"),
            captured=st.get("accesses_read", "?"), reduced=st.get("accesses_kept", "?"),
            sync=st.get("sync_events", "?"),
            pairs=f"{flt.get('pairs_total', '?')}/{flt.get('pairs_left', '?')}",
            vars=f"{flt.get('vars_shared', '?')}/{flt.get('vars_left', '?')}",
            cands=len(res.stats.get("candidates", [])), confirmed=confirmed,
            il_locs=len(loc_lines(res.found)), ts_locs=len(loc_lines(tsan_union)),
            expected=len(h.expect), il_match=len(h.expect & res.found),
            il_false=len(res.found - h.expect), ts_match=len(h.expect & tsan_union),
            ts_false=len(tsan_union - h.expect),
            native=f"{nw:.3f} / {nc:.3f}", record=f"{rw:.3f} / {rc:.3f}",
            tsan=f"{tw:.3f} / {tc:.3f}",
            vs_native=f"{rc / nc:.1f}x" if nc > 0 else "-", vs_tsan=f"{rc / tc:.2f}x" if tc > 0 else "-",
            replay=f"{pc:.3f}" if pc is not None else "-",
            replay_tsan=f"{pc / tc:.2f}x" if pc is not None and tc > 0 else "-",
            detect=f"{res.detect_wall:.2f} / {res.detect_cpu:.2f}", detect_rss=f"{res.detect_rss_kb // 1024}",
            bytes_per_event=f"{trace_bytes / events:.1f}" if events else "-",
            notes="; ".join(res.notes)))
    for e in errors:
        print(f"ERROR {e}", file=sys.stderr)
    print(machine_line())
    print(f"Builds: native `{CLANG} -O2 -g`, ilgen `ilgen cc -O2 -g`, TSan `{CLANG} -O2 -g "
          f"-fsanitize=thread`. Times: median of 3 runs, wall s / user+sys CPU s; the ratios "
          f"divide CPU seconds (wall times on a shared machine say more about its load). replay = "
          f"user+sys CPU s of the ilgen build replaying an HB-only schedule of the recorded trace "
          f"(no steps: the online happens-before detector alone), median of 3. detect s = wall / "
          f"user+sys CPU s of `ilgen detect` with its replays, RSS = their peak resident set in MiB. "
          f"bytes/event = the thread files' bytes over captured accesses + sync events. Trace figures "
          f"from `ilgen detect --all-sites` on the last recorded run: captured = memory accesses "
          f"read from the trace, reduced = kept after reduction, vars and pairs = shared / left "
          f"after the happens-before and lockset filter, candidates = schedules predicted, "
          f"confirmed = findings confirmed by replay. Error locations = distinct source lines in "
          f"reports (TSan: union of {runs} runs). errors = EXPECT lines found / false reports.\n")
    cols = [("app", "name"), ("LOC", "loc"), ("threads", "threads"), ("captured", "captured"),
            ("reduced", "reduced"), ("sync events", "sync"), ("vars", "vars"), ("pairs", "pairs"),
            ("candidates", "cands"), ("confirmed", "confirmed"), ("ilgen locs", "il_locs"),
            ("TSan locs", "ts_locs"), ("real errors", "expected"), ("ilgen found", "il_match"),
            ("ilgen false", "il_false"), ("TSan found", "ts_match"), ("TSan false", "ts_false"),
            ("native s", "native"), ("record s", "record"), ("TSan s", "tsan"),
            ("record/native", "vs_native"), ("record/TSan", "vs_tsan"), ("replay s", "replay"),
            ("replay/TSan", "replay_tsan"), ("detect s", "detect"), ("detect RSS MiB", "detect_rss"),
            ("bytes/event", "bytes_per_event")]
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|---|" + "--:|" * (len(cols) - 1))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for _, k in cols) + " |")
    for r in rows:
        if r["notes"]:
            print(f"\nNote {r['name']}: {r['notes']}")
    return 2 if errors else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p):
        p.add_argument("--filter", default="", help="only files whose name contains SUBSTR")
        p.add_argument("--work", default=str(DEFAULT_WORK), help="scratch directory")
        p.add_argument("--ilgen", default=str(REPO / "target" / "release" / "ilgen"))

    p = sub.add_parser("check", help="ilgen on every scenario against its EXPECT header")
    common(p)
    p.add_argument("--scenarios-dir", default=str(SCEN_DIR))
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    p = sub.add_parser("table1", help="Table 1: scenarios, ilgen vs TSan and helgrind")
    common(p)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--no-helgrind", dest="helgrind", action="store_false",
                   help="leave out the helgrind columns (zeros)")
    p.add_argument("--stability", metavar="FILE",
                   help="add 'found in k/R single runs' from what `stability.py --json` wrote")
    p.add_argument("--scenarios-dir", default=str(SCEN_DIR))
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    p = sub.add_parser("table2", help="Table 2: applications, ilgen vs TSan")
    common(p)
    p.add_argument("--runs", type=int, default=5, help="TSan runs for the union (>= 3)")
    p.add_argument("--apps-dir", default=str(APPS_DIR))
    args = ap.parse_args(argv)
    if shutil.which(CLANG) is None and args.cmd != "check":
        print(f"evaluate: {CLANG} not found: run `make build`", file=sys.stderr)
        return 2
    try:
        return {"check": cmd_check, "table1": cmd_table1, "table2": cmd_table2}[args.cmd](args)
    except InputError as e:
        print(f"evaluate: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
