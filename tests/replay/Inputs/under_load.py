#!/usr/bin/env python3
"""under_load.py ILGEN RUNS NAME=ENV:TRACE...: runs `ilgen detect --format json TRACE` RUNS times
for each trace (with ENV, `VAR=1`, set) while two CPU-burning processes (`yes > /dev/null`) run,
and prints for each NAME how many runs gave the first run's verdicts (the counts of every class
and each finding's kind and source lines), then the verdicts themselves. The burners are killed
when it ends, whatever happens."""
import json
import os
import subprocess
import sys


def verdicts(ilgen, env, trace):
    out = subprocess.run([ilgen, "detect", "--format", "json", trace], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    report = json.loads(out.stdout)
    findings = []
    for f in report["findings"]:
        if f["kind"] == "race":
            lines = [f["current"]["location"].get("line"), f["previous"]["location"].get("line")]
        else:
            lines = [b["location"].get("line") for b in f["blocked"]]
        findings.append("%s@%s" % (f["kind"], ",".join(str(n) for n in sorted(lines))))
    counts = " ".join("%s=%d" % kv for kv in sorted(report["counts"].items()) if kv[1])
    return "exit=%d %s %s" % (out.returncode, counts, " ".join(sorted(findings)))


def main():
    ilgen, runs, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    burners = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(2)]
    try:
        for spec in specs:
            name, rest = spec.split("=", 1)
            var, trace = rest.split(":", 1)
            env = dict(os.environ, **{var: "1"})
            seen = [verdicts(ilgen, env, trace) for _ in range(runs)]
            same = sum(1 for v in seen if v == seen[0])
            print("%s: %d/%d same: %s" % (name, same, runs, seen[0]))
            for v in sorted(set(seen) - {seen[0]}):
                print("%s: differs: %s" % (name, v))
    finally:
        for b in burners:
            b.kill()
            b.wait()


main()
