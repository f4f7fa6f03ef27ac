"""ilgen's lldb commands: `command script import ilgen_lldb.py`, then `ilgen load FILE`.

Takes an lldb session on a replaying program (`ilgen replay --lldb` starts one) and the session
file (TRACE_DIR/replay-gdb/session.json); gives breakpoints on the runtime's report and stop hooks
that select the user's frame and print the finding (or every blocked thread's lock), and the
commands `ilgen load FILE`, `ilgen finding`, `ilgen schedule`, `ilgen step-sync`, `ilgen threads`. The shared text
is in ilgen_common.py, next to this file.
"""

import os
import sys

import lldb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ilgen_common as common  # noqa: E402

STATE = {"session": None}


def read_memory(target, symbol, size):
    process = target.GetProcess()
    if not process.IsValid() or not process.GetState() in (lldb.eStateStopped, lldb.eStateCrashed):
        return None
    symbols = target.FindSymbols(symbol)
    if symbols.GetSize() == 0:
        return None
    addr = symbols.GetContextAtIndex(0).GetSymbol().GetStartAddress().GetLoadAddress(target)
    error = lldb.SBError()
    raw = process.ReadMemory(addr, size, error)
    return raw if error.Success() else None


def cursor(target):
    raw = read_memory(target, common.CURSOR_SYMBOL, 4)
    return None if raw is None else int.from_bytes(raw, "little")


def tid_of(target):
    raw = read_memory(target, common.THREADS_SYMBOL, 8 * common.THREAD_SLOTS)
    return {} if raw is None else common.thread_table(raw)


def frame_file(frame):
    spec = frame.GetLineEntry().GetFileSpec()
    return spec.fullpath if spec.IsValid() else None


def user_frame(thread):
    frames = [thread.GetFrameAtIndex(i) for i in range(thread.GetNumFrames())]
    i = common.user_frame_index(STATE["session"], [(f.GetFunctionName(), frame_file(f)) for f in frames])
    return None if i is None else frames[i]


def where(frame):
    if frame is None:
        return "??"
    line = frame.GetLineEntry()
    return "%s:%d in %s" % (frame_file(frame), line.GetLine(), frame.GetFunctionName())


def land(thread, out):
    """Selects the user's frame of `thread` and shows it."""
    frame = user_frame(thread)
    if frame is None:
        out.append("ilgen: thread %d is in no function of the program yet" % thread.GetIndexID())
        return
    process = thread.GetProcess()
    process.SetSelectedThread(thread)
    thread.SetSelectedFrame(frame.GetFrameID())
    out.append("frame #%d: %s" % (frame.GetFrameID(), where(frame)))


def on_hook(frame, bp_loc, internal_dict):
    """Breakpoint callback of the report and stop hooks: prints and selects; always stops."""
    s = STATE["session"]
    if s is None:
        return True
    thread = frame.GetThread()
    target = thread.GetProcess().GetTarget()
    hook = common.hook_of([thread.GetFrameAtIndex(i).GetFunctionName() for i in range(3)])
    out = []
    if hook == common.REPORT_HOOK:
        out.append(common.finding_text(s, cursor(target)))
        if s["kind"] == "deadlock":
            table = tid_of(target)
            by_tid = {table[t.GetThreadID()]: t for t in thread.GetProcess() if t.GetThreadID() in table}
            out.append("ilgen: every thread is blocked:")
            last = None
            for b in s["blocked"]:
                t = by_tid.get(b["tid"])
                if t is None:
                    out.append("  T%d: not running" % b["tid"])
                    continue
                out.append(common.blocked_row(b, t.GetIndexID(), where(user_frame(t))))
                last = t
            if last is not None:
                land(last, out)
        else:
            land(thread, out)
    elif hook == common.STOP_HOOK:
        out.append("ilgen: stopped before the first access: " + common.access_text(s["first"]))
        out.append("  (`continue` runs to the second: " + common.access_text(s["second"]) + ")")
        land(thread, out)
    elif hook == common.STEP_HOOK:
        out.append(common.took_text(s, cursor(target)))
        land(thread, out)
    print("\n".join(out))
    return True


def ilgen(debugger, command, result, internal_dict):
    """ilgen load FILE | finding | schedule | step-sync | threads"""
    words = command.split(None, 1)
    sub = words[0] if words else ""
    target = debugger.GetSelectedTarget()
    if sub == "load" and len(words) == 2:
        try:
            STATE["session"] = common.load(os.path.expanduser(words[1].strip()))
        except ValueError as e:
            result.SetError("ilgen: " + str(e))
            return
        for hook in (common.REPORT_HOOK, common.STOP_HOOK):
            bp = target.BreakpointCreateByName(hook)
            bp.SetScriptCallbackFunction("ilgen_lldb.on_hook")
        return
    s = STATE["session"]
    if s is None:
        result.SetError("ilgen: no session; run `ilgen load TRACE_DIR/replay-gdb/session.json`")
    elif sub == "finding":
        result.AppendMessage(common.finding_text(s, cursor(target)))
    elif sub == "schedule":
        result.AppendMessage(common.schedule_text(s, cursor(target)))
    elif sub == "step-sync":
        bp = target.BreakpointCreateByName(common.STEP_HOOK)
        bp.SetOneShot(True)
        bp.SetScriptCallbackFunction("ilgen_lldb.on_hook")
        running = target.GetProcess().IsValid()
        debugger.HandleCommand("process continue" if running else "process launch")
    elif sub == "threads":
        table = tid_of(target)
        for t in target.GetProcess():
            result.AppendMessage(common.thread_row(
                s, t.GetIndexID(), table.get(t.GetThreadID()), where(user_frame(t))))
    else:
        result.SetError("usage: ilgen load FILE | finding | schedule | step-sync | threads")


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -o -f ilgen_lldb.ilgen ilgen")
