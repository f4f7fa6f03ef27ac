"""Runs a command and checks its exit status and that it ended within a time limit.

Usage: within.py SECONDS STATUS -- command args...
Exits 0 when the command exited with STATUS in under SECONDS, else 1 with a message naming what
differed. The command's output passes through. The limit is enforced (the command is killed past
twice SECONDS) so a hang fails the test instead of stalling it.
"""
import subprocess
import sys
import time

limit, want = float(sys.argv[1]), int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
try:
    got = subprocess.run(cmd, timeout=2 * limit).returncode
except subprocess.TimeoutExpired:
    sys.exit(f"within.py: {cmd[0]} still running after {2 * limit:.1f} s")
took = time.monotonic() - start
if got != want:
    sys.exit(f"within.py: {cmd[0]} exited {got}, expected {want}")
if took >= limit:
    sys.exit(f"within.py: {cmd[0]} took {took:.1f} s, limit {limit:.1f} s")
