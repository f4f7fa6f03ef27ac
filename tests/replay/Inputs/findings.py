#!/usr/bin/env python3
"""Prints one line summing up TRACE_DIR/replay-outcome.json: result, steps done/total, and each
race as current/previous kind:thread:site, so that runs can be compared with `sort | uniq -c`."""
import json
import os
import sys

o = json.load(open(os.path.join(sys.argv[1], "replay-outcome.json")))
races = ["%s:T%d:%d/%s:T%d:%d" % (r["current"]["kind"], r["current"]["thread"]["tid"],
                                  r["current"]["site"], r["previous"]["kind"],
                                  r["previous"]["thread"]["tid"], r["previous"]["site"])
         for r in o["races"]]
dl = o["deadlock"]
if dl:
    races.append("deadlock:" + ",".join("T%d@%s" % (t["thread"]["tid"], t["site"])
                                        for t in dl["threads"]))
print(o["result"], "%d/%d" % (o["steps_done"], o["steps_total"]), *races)
