#!/usr/bin/env python3
"""Differential test: ilgen's CSP checker on the exported CSP_M model against the native solver.

    solvers_agree.py ILGEN TRACE_DIR

Copies TRACE_DIR (detect writes its candidates into it), runs `ILGEN detect --no-replay --format
json` there once with `--solver native` and once with `--solver check`, and compares the verdicts:
the set of shared objects with a race candidate, and whether there is a deadlock candidate. Prints
one line with the common verdict and exits 0 when they agree; otherwise prints both and exits 1.
Exits 2 when a detect run fails.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def verdicts(ilgen, trace, solver):
    # The CSP back end does not encode the reads-from edges of deciding reads: compare the models
    # without them.
    r = subprocess.run([ilgen, "detect", "--no-replay", "--no-reads-from", "--format", "json",
                        "--solver", solver, str(trace)], capture_output=True, text=True,
                       timeout=600)
    if r.returncode not in (0, 66):
        sys.stderr.write(f"solvers_agree: `detect --solver {solver}` exited {r.returncode}:\n"
                         f"{r.stderr}")
        sys.exit(2)
    doc = json.loads(r.stdout)
    races = sorted({hex(c["object"]["addr"]) for c in doc["candidates"] if c["kind"] == "race"})
    deadlock = any(c["kind"] == "deadlock" for c in doc["candidates"])
    return races, deadlock


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    ilgen, trace = sys.argv[1], Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "trace"
        shutil.copytree(trace, copy)
        native = verdicts(ilgen, copy, "native")
        check = verdicts(ilgen, copy, "check")
    if native != check:
        print(f"solvers disagree: native races {native[0]} deadlock {native[1]}; "
              f"check races {check[0]} deadlock {check[1]}")
        return 1
    print(f"solvers agree: {len(native[0])} racy object(s), deadlock: {'yes' if native[1] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
