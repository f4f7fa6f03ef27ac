"""Compares two JSON reports of ilgen: prints `same`, or a unified diff, and exits 1 if they differ.

Usage: same_report.py A.json B.json

Before comparing it drops what belongs to one replay process and so differs between any two runs
of `ilgen detect` on one trace: each finding's `pid` and `replay_dir`, and the addresses of its
accesses and of the locks they held (the replay's own, under address-space randomisation); and a
shard's `shard` object.
"""

import difflib
import json
import sys


def load(path):
    report = json.load(open(path))
    report.pop("shard", None)
    for finding in report["findings"]:
        finding["pid"] = 0
        finding["replay_dir"] = ""
        for side in ("current", "previous", "e1", "f", "e2"):
            if isinstance(finding.get(side), dict):
                finding[side]["addr"] = 0
                for lock in finding[side].get("locks", []):
                    lock["object"] = 0
    return json.dumps(report, indent=1, sort_keys=True).splitlines()


a, b = load(sys.argv[1]), load(sys.argv[2])
if a == b:
    print("same")
else:
    print("\n".join(difflib.unified_diff(a, b, sys.argv[1], sys.argv[2], lineterm="")))
    sys.exit(1)
