"""ilgen's gdb commands: `source ilgen_gdb.py`, then `ilgen load TRACE/replay-gdb/session.json`.

Takes a gdb session on a replaying program (`ilgen replay --gdb` starts one: ILGEN_OPTIONS set,
this file sourced, the session loaded) and the session file; gives breakpoints on the runtime's
report and stop hooks whose stops land in the user's frame with the finding printed, and the
commands `ilgen finding`, `ilgen schedule`, `ilgen step-sync`, `ilgen threads`, `ilgen load`.
The shared text is in ilgen_common.py, next to this file.
"""

import os
import sys

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ilgen_common as common  # noqa: E402

STATE = {"session": None, "breakpoints": []}


def session():
    if STATE["session"] is None:
        env = gdb.execute("show environment ILGEN_OPTIONS", to_string=True)
        path = common.session_path(env.split("=", 1)[-1].strip())
        if path is None:
            raise gdb.GdbError("ilgen: no session; run `ilgen load FILE` (FILE: "
                               "TRACE_DIR/replay-gdb/session.json, written by `ilgen replay --gdb`)")
        load(path)
    return STATE["session"]


def load(path):
    try:
        STATE["session"] = common.load(path)
    except ValueError as e:
        raise gdb.GdbError("ilgen: " + str(e))
    if not STATE["breakpoints"]:
        for hook in (common.REPORT_HOOK, common.STOP_HOOK):
            STATE["breakpoints"].append(hook_breakpoint(hook, temporary=False))


def hook_breakpoint(hook, temporary):
    """A breakpoint on a runtime hook that prints nothing itself: `on_stop` shows the user's
    frame instead of the runtime's."""
    bp = gdb.Breakpoint(hook, internal=True, temporary=temporary)
    bp.silent = True
    return bp


def read_memory(symbol, size):
    """`size` bytes at `symbol` of the running process, or None when there is none."""
    if gdb.selected_inferior().pid == 0:
        return None
    # The runtime's symbols have no debug information: C reads them as plain linker symbols.
    language = gdb.parameter("language")
    gdb.execute("set language c", to_string=True)
    try:
        addr = int(gdb.parse_and_eval("(unsigned long)&" + symbol))
        return bytes(gdb.selected_inferior().read_memory(addr, size))
    except gdb.error:
        return None
    finally:
        gdb.execute("set language " + language, to_string=True)


def cursor():
    raw = read_memory(common.CURSOR_SYMBOL, 4)
    return None if raw is None else int.from_bytes(raw, "little")


def tid_of():
    """Kernel tid -> ilgen T-id of the replaying threads."""
    raw = read_memory(common.THREADS_SYMBOL, 8 * common.THREAD_SLOTS)
    return {} if raw is None else common.thread_table(raw)


def where(frame):
    sal = frame.find_sal()
    if sal.symtab is None:
        return frame.name() or "??"
    return "%s:%d in %s" % (sal.symtab.filename, sal.line, frame.name())


def user_frame(thread):
    """The newest frame of `thread` in the user's code (None: it has none)."""
    thread.switch()
    frames = []
    frame = gdb.newest_frame()
    while frame is not None:
        frames.append(frame)
        frame = frame.older()
    names = [(f.name(), f.find_sal().symtab.filename if f.find_sal().symtab else None)
             for f in frames]
    i = common.user_frame_index(session(), names)
    return None if i is None else frames[i]


def land(thread):
    """Selects the user's frame of `thread` and shows it."""
    frame = user_frame(thread)
    if frame is None:
        print("ilgen: thread %d is in no function of the program yet" % thread.num)
    else:
        frame.select()
        gdb.execute("frame")


def show_deadlock():
    s = session()
    table = tid_of()
    by_tid = {t: th for th in gdb.selected_inferior().threads() for lwp, t in table.items()
              if th.ptid[1] == lwp}
    print("ilgen: every thread is blocked:")
    last = None
    for b in s["blocked"]:
        th = by_tid.get(b["tid"])
        if th is None:
            print("  T%d: not running" % b["tid"])
            continue
        frame = user_frame(th)
        print(common.blocked_row(b, th.num, where(frame) if frame else "??"))
        last = th
    if last is not None:
        land(last)


def on_stop(event):
    if STATE["session"] is None or not isinstance(event, gdb.BreakpointEvent):
        return
    thread = gdb.selected_thread()
    newest = [gdb.newest_frame()]
    while len(newest) < 3 and newest[-1].older() is not None:
        newest.append(newest[-1].older())
    hook = common.hook_of([f.name() for f in newest])
    s = STATE["session"]
    if hook == common.REPORT_HOOK:
        print(common.finding_text(s, cursor()))
        if s["kind"] == "deadlock":
            show_deadlock()
        else:
            land(thread)
    elif hook == common.STOP_HOOK:
        print("ilgen: stopped before the first access: " + common.access_text(s["first"]))
        print("  (`continue` runs to the second: " + common.access_text(s["second"]) + ")")
        land(thread)
    elif hook == common.STEP_HOOK:
        print(common.took_text(s, cursor()))
        land(thread)


class Ilgen(gdb.Command):
    """ilgen's commands on a replay: finding, schedule, step-sync, threads, load FILE."""

    def __init__(self):
        super().__init__("ilgen", gdb.COMMAND_USER, prefix=True)


class Load(gdb.Command):
    """ilgen load FILE: read the session file (TRACE_DIR/replay-gdb/session.json)."""

    def __init__(self):
        super().__init__("ilgen load", gdb.COMMAND_USER, gdb.COMPLETE_FILENAME)

    def invoke(self, arg, from_tty):
        load(os.path.expanduser(arg.strip()))


class Finding(gdb.Command):
    """ilgen finding: both accesses (or the blocked threads) and the schedule step."""

    def __init__(self):
        super().__init__("ilgen finding", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        print(common.finding_text(session(), cursor()))


class Schedule(gdb.Command):
    """ilgen schedule: the schedule's steps, `=>` at the next one to take."""

    def __init__(self):
        super().__init__("ilgen schedule", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        print(common.schedule_text(session(), cursor()))


class StepSync(gdb.Command):
    """ilgen step-sync: run until the next step of the schedule is taken, in its thread (before
    `run`: start the program and stop at its first step)."""

    def __init__(self):
        super().__init__("ilgen step-sync", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        session()
        hook_breakpoint(common.STEP_HOOK, temporary=True)
        gdb.execute("continue" if gdb.selected_inferior().pid else "run")


class Threads(gdb.Command):
    """ilgen threads: each gdb thread, its ilgen T-id, creation site and user frame."""

    def __init__(self):
        super().__init__("ilgen threads", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        s = session()
        table = tid_of()
        selected = gdb.selected_thread()
        frame = gdb.selected_frame()
        for th in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
            f = user_frame(th)
            print(common.thread_row(s, th.num, table.get(th.ptid[1]), where(f) if f else "??"))
        selected.switch()
        frame.select()


class RuntimeFrames:
    """Hides the runtime's frames from `bt` (`bt -no-filters` shows them)."""

    def __init__(self):
        self.name = "ilgen-runtime"
        self.priority = 100
        self.enabled = True
        gdb.frame_filters[self.name] = self

    def filter(self, frames):
        return (f for f in frames if not common.is_runtime_frame(f.function(), f.filename()))


for command in (Ilgen, Load, Finding, Schedule, StepSync, Threads):
    command()
RuntimeFrames()
gdb.events.stop.connect(on_stop)
