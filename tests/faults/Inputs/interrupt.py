"""interrupt.py SIGNAL BINARY -- ILGEN-COMMAND...

Starts ILGEN-COMMAND, waits (up to 20 s) until a process running BINARY exists (a replay), sends
SIGNAL to ilgen, waits for it, and prints how ilgen ended and how many processes running BINARY
are left half a second later (each is then killed, so a failing test leaves nothing either)."""
import os
import signal
import subprocess
import sys
import time

sig = getattr(signal, sys.argv[1])
binary = os.path.realpath(sys.argv[2])
command = sys.argv[sys.argv.index("--") + 1:]


def running():
    pids = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/exe") == binary:
                    pids.append(int(pid))
            except OSError:
                pass
    return pids


def as_from_a_terminal():
    # A test runner may ignore SIGINT, and ilgen keeps an ignored signal ignored: undo that, as a
    # shell does for a foreground command.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


ilgen = subprocess.Popen(
    command,
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
    preexec_fn=as_from_a_terminal,
)
deadline = time.time() + 20
while not running() and time.time() < deadline and ilgen.poll() is None:
    time.sleep(0.05)
seen = bool(running())
time.sleep(0.3)
ilgen.send_signal(sig)
status = ilgen.wait()
time.sleep(0.5)
left = running()
for pid in left:
    os.kill(pid, signal.SIGKILL)
print(f"{sys.argv[1]}: replay seen {seen}, ilgen status {status}, {len(left)} left")
