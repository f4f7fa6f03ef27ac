"""ilgen's debugger commands, the part gdb and lldb share.

Takes `session.json` (written by `ilgen replay --gdb/--lldb` next to this file: the finding with
source lines, the schedule as text, the threads' creation sites) and what the debugger read from
the replaying process (the runtime's step cursor and thread table, rt/src/replay/debug.rs);
gives the text of `ilgen finding`, `ilgen schedule`, `ilgen threads` and the stop views, and
which frames are the user's.
"""

import json
import os
import struct

CURSOR_SYMBOL = "__ilgen_debug_cursor"
THREADS_SYMBOL = "__ilgen_debug_threads"
THREAD_SLOTS = 256
REPORT_HOOK = "__ilgen_report_hook"
STOP_HOOK = "__ilgen_stop_hook"
STEP_HOOK = "__ilgen_step_hook"


def load(path):
    """The session of `path`; raises ValueError with a message naming the file."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError("failed to read %s: %s; start the replay with `ilgen replay --gdb`" % (path, e))


def session_path(options):
    """session.json of the replay whose ILGEN_OPTIONS are `options` (its outcome_dir)."""
    for item in options.replace(" ", ":").split(":"):
        if item.startswith("outcome_dir="):
            return os.path.join(item[len("outcome_dir="):], "session.json")
    return None


def thread_table(raw):
    """Kernel tid -> recorded tid, from the bytes of the runtime's thread table."""
    table = {}
    for (v,) in struct.iter_unpack("<Q", raw):
        if v:
            table[v >> 32] = v & 0xFFFFFFFF
    return table


def is_runtime_frame(function, filename):
    """A frame of ilgen's runtime: its Rust code (and Rust's library) or one of its C hooks."""
    name = str(function or "")
    return (filename or "").endswith(".rs") or name.startswith("ilgen_rt::") or \
        name.split("::")[-1].startswith("__ilgen")


def user_frame_index(session, frames):
    """Index of the newest of `frames` ((function, source file) pairs, newest first) that is the
    user's: in one of the program's files the session names, else any source at an absolute path
    that is not the runtime's (Rust, its hooks; a system library's debug information names its
    files relative to a build directory); None when there is none."""
    sources = session["sources"]

    def program(filename):
        return any(filename == f or filename.endswith("/" + f) or f.endswith("/" + filename)
                   for f in sources)

    def other(function, filename):
        return filename.startswith("/") and not is_runtime_frame(function, filename)

    for test in (program, None):
        for i, (function, filename) in enumerate(frames):
            if filename and (test(filename) if test else other(function, filename)):
                return i
    return None


def hook_of(functions):
    """Which runtime hook the newest frames' `functions` are in (debuggers name it with its Rust
    path, below the frames of what it inlined), or None."""
    for function in functions[:3]:
        name = (function or "").rsplit("::", 1)[-1]
        if name in (REPORT_HOOK, STOP_HOOK, STEP_HOOK):
            return name
    return None


def took_text(session, cursor):
    return "ilgen: took " + step_line(cursor - 1, session["steps"])


def access_text(a):
    return "%s by thread T%d at %s" % (a["access"], a["tid"], a["where"])


def step_line(s, steps):
    step = steps[s]
    return "step %d: T%d %s" % (s + 1, step["tid"], step["text"])


def progress(session, cursor):
    n = len(session["steps"])
    if cursor is None:
        return "schedule: %d steps (the program is not running)" % n
    return "schedule step %d of %d taken" % (min(cursor, n), n)


def finding_text(session, cursor):
    lines = ["ilgen: candidate %d: %s" % (session["candidate"], session["title"])]
    if session["kind"] == "race":
        lines.append("  first access:  " + access_text(session["first"]))
        lines.append("  second access: " + access_text(session["second"]))
    elif session["kind"] == "atomicity":
        lines.append("  e1 (transaction): " + access_text(session["first"]))
        lines.append("  f (other thread): " + access_text(session["other"]))
        lines.append("  e2 (transaction): " + access_text(session["second"]))
    else:
        for b in session["blocked"]:
            lines.append("  T%d blocked in %s at %s" % (b["tid"], blocked_op(b), b["where"]))
    lines.append("  " + progress(session, cursor))
    return "\n".join(lines)


def blocked_op(b):
    return b["op"] + (" of " + b["object"] if b.get("object") else "")


def schedule_text(session, cursor):
    """The steps, `=>` marking the next one to take (the steps above it are taken)."""
    steps = session["steps"]
    lines = ["ilgen: " + progress(session, cursor)]
    for i in range(len(steps)):
        mark = "=>" if cursor == i else "  "
        note = "   (observed prefix)" if i < session["prefix_steps"] else ""
        lines.append("%s %s%s" % (mark, step_line(i, steps), note))
    if cursor is not None and cursor >= len(steps):
        lines.append("=> (schedule finished: the threads run free)")
    return "\n".join(lines)


def thread_row(session, debugger_id, tid, where):
    """One line of `ilgen threads`: debugger thread, ilgen T-id, creation site, where it is."""
    if tid is None:
        return "  %-6s (not an ilgen thread)  at %s" % (debugger_id, where)
    created = {t["tid"]: t["created_by"] for t in session["threads"]}.get(tid)
    by = "created by " + created if created else "main thread"
    return "  %-6s T%-3d %s; now at %s" % (debugger_id, tid, by, where)


def blocked_row(b, debugger_id, where):
    return "  T%d (thread %s) blocked in %s at %s\n      now at %s" % (
        b["tid"], debugger_id, blocked_op(b), b["where"], where)
