#!/usr/bin/env python3
"""sarif_summary.py FILE: one line per fact of a SARIF log that the tests check, in a stable order:
the version and tool, each rule id, and per result its rule, level, location, related locations and
its code flow as `T<tid>:<basename>:<line>@<executionOrder>` in execution order."""
import json
import os
import sys


def where(loc):
    p = loc.get("physicalLocation")
    if not p:
        return "-"
    return "%s:%d:%d" % (os.path.basename(p["artifactLocation"]["uri"]), p["region"]["startLine"],
                         p["region"]["startColumn"])


log = json.load(open(sys.argv[1]))
print("version", log["version"], "runs", len(log["runs"]))
run = log["runs"][0]
print("tool", run["tool"]["driver"]["name"])
for r in run["tool"]["driver"]["rules"]:
    print("rule", r["id"])
for res in run["results"]:
    print("result", res["ruleId"], res["level"], where(res["locations"][0]))
    for rel in res.get("relatedLocations", []):
        print("  related", where(rel), rel["message"]["text"])
    steps = []
    for flow in res["codeFlows"][0]["threadFlows"]:
        for l in flow["locations"]:
            steps.append((l["executionOrder"], flow["id"], where(l["location"])))
    print("  flow", " ".join("%s:%s@%d" % (t, w, o) for o, t, w in sorted(steps)))
