#!/usr/bin/env python3
"""Runs one command and writes its peak resident set (KiB, with the children it waited for) to a
file, so that the measuring driver's own memory does not count.

Usage: peak_rss.py OUT_FILE CMD [ARG ...]

Linux carries a process's peak RSS across fork and exec: a command that a 400 MiB Python driver
starts reports at least 400 MiB from wait4, however little it uses itself. This small process
forks the command instead, so the floor is its own few MiB. It ignores SIGTERM, SIGINT and SIGHUP
(the command, in the same process group, gets them and may stop gracefully: `ilgen detect` then
prints what its replays proved) and still writes the figure. Its exit status is the command's; a
signal the command died of is raised again. A SIGKILL to the group leaves no file."""
import os
import signal
import sys

STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: peak_rss.py OUT_FILE CMD [ARG ...]")
    out, cmd = sys.argv[1], sys.argv[2:]
    for s in STOPS:
        signal.signal(s, signal.SIG_IGN)
    pid = os.fork()
    if pid == 0:
        # An ignored signal stays ignored across exec: give the command the default back.
        for s in STOPS:
            signal.signal(s, signal.SIG_DFL)
        try:
            os.execvp(cmd[0], cmd)
        except OSError as e:
            print(f"peak_rss.py: cannot run {cmd[0]}: {e}", file=sys.stderr)
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    with open(out, "w") as f:
        f.write(f"{usage.ru_maxrss}\n")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
