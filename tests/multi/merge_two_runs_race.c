// `ilgen detect DIR...` on two runs of one binary: the program's argument chooses which of two
// unsynchronized counters its worker and main both write, so the run recorded with `x` predicts
// (and confirms) only the race on x, the run with `y` only the one on y. Detected together they
// give one report with both races, each naming the run that predicted it and the replay command
// against that run's own trace; exit 66. `ilgen replay` of the second finding uses the second
// trace. Traces of another binary are refused (exit 2), as is the same trace twice.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.x %t.y && %ilgen run --out %t.x -- %t x && %ilgen run --out %t.y -- %t y
// RUN: sh -c '%ilgen detect %t.x; echo "exit=$?"' | FileCheck %s --check-prefix=ONLY-X
// RUN: sh -c '%ilgen detect %t.y; echo "exit=$?"' | FileCheck %s --check-prefix=ONLY-Y
// RUN: sh -c '%ilgen detect %t.x %t.y; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
//
// JSON and SARIF say the same, each valid against its schema.
// RUN: sh -c '%ilgen detect --format json %t.x %t.y > %t.json; test $? = 66'
// RUN: python3 %S/../confirm/Inputs/validate.py %S/../confirm/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("runs", [x["trace_dir"].rsplit(".",1)[1] for x in r["runs"]]); [print(f["kind"], f["object"]["name"], "run", f["run"], "runs", f["runs"], "candidates", f["candidates"]) for f in r["findings"]]' %t.json | FileCheck %s --check-prefix=JSON
// RUN: sh -c '%ilgen detect --format sarif %t.x %t.y > %t.sarif; test $? = 66'
// RUN: python3 %S/../confirm/Inputs/validate.py %S/../confirm/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=SARIF-VALID
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]["results"]; [print(x["properties"]["run"], x["properties"]["runs"], x["properties"]["traceDir"].rsplit(".",1)[1], x["message"]["text"].split("; ")[-1]) for x in r]' %t.sarif | FileCheck %s --check-prefix=SARIF
//
// The second finding's replay command replays candidate 1 of the y trace: the race on y.
// RUN: grep -o 'ilgen replay [^ ]*y:1' %t.text | sed 's|^ilgen replay |%ilgen replay |' > %t.replay.sh
// RUN: sh -c 'sh %t.replay.sh; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
//
// RUN: %ilgen cc -g -O1 %s -o %t.other
// RUN: rm -rf %t.o && %ilgen run --out %t.o -- %t.other x
// RUN: sh -c '%ilgen detect %t.x %t.o; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: sh -c '%ilgen detect %t.x %t.x/; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=TWICE
#include <pthread.h>

int x, y;
int use_y;

void *worker(void *arg) {
  if (use_y)
    y++;
  else
    x++;
  return arg;
}

int main(int argc, char **argv) {
  use_y = argc > 1 && argv[1][0] == 'y';
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (use_y)
    y = 5;
  else
    x = 5;
  pthread_join(t, NULL);
  return 0;
}

// The replay reports the two accesses in the order they came, which the schedule leaves open.
// ONLY-X-DAG: #0 worker {{.*}}merge_two_runs_race.c:40:6
// ONLY-X-DAG: #0 main {{.*}}merge_two_runs_race.c:51:7
// ONLY-X-NOT: Predicted in
// ONLY-X:     ilgen: 1 finding(s) confirmed
// ONLY-X-NEXT: exit=66
// ONLY-Y-DAG: #0 worker {{.*}}merge_two_runs_race.c:38:6
// ONLY-Y-DAG: #0 main {{.*}}merge_two_runs_race.c:49:7
// ONLY-Y:     ilgen: 1 finding(s) confirmed
// ONLY-Y-NEXT: exit=66

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:      #0 worker {{.*}}merge_two_runs_race.c:40:6
// CHECK-DAG:      #0 main {{.*}}merge_two_runs_race.c:51:7
// CHECK:        Location is global 'x' of size 4
// CHECK:        Predicted in run 1 (of 2); replayed with run 1's schedule: ilgen replay {{.*}}merge_two_runs_race.c.tmp.x:1
// CHECK-EMPTY:
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in {{.*}}merge_two_runs_race.c.tmp.x/replay-1):
// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:      #0 worker {{.*}}merge_two_runs_race.c:38:6
// CHECK-DAG:      #0 main {{.*}}merge_two_runs_race.c:49:7
// CHECK:        Location is global 'y' of size 4
// CHECK:        Predicted in run 2 (of 2); replayed with run 2's schedule: ilgen replay {{.*}}merge_two_runs_race.c.tmp.y:1
// CHECK-EMPTY:
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in {{.*}}merge_two_runs_race.c.tmp.y/replay-1):
// CHECK:      ilgen: run 1: {{.*}}merge_two_runs_race.c.tmp.x{{$}}
// CHECK-NEXT: ilgen: run 2: {{.*}}merge_two_runs_race.c.tmp.y{{$}}
// CHECK-NEXT: ilgen: 2 candidate(s) replayed: 2 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 2 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// VALID:      valid: ilgen report, format version 11
// JSON:       runs ['x', 'y']
// JSON-NEXT:  race x run 1 runs [1] candidates [1]
// JSON-NEXT:  race y run 2 runs [2] candidates [1]
// SARIF-VALID: valid: Static Analysis Results Format (SARIF) Version 2.1.0-rtm.5 JSON Schema
// SARIF:      1 [1] x predicted in runs 1 (of 2), run 1's schedule
// SARIF-NEXT: 2 [2] y predicted in runs 2 (of 2), run 2's schedule

// REPLAY:     WARNING: ilgen: data race
// REPLAY-DAG: #0 worker {{.*}}merge_two_runs_race.c:38:6
// REPLAY-DAG: #0 main {{.*}}merge_two_runs_race.c:49:7
// REPLAY:     Location is global 'y'
// REPLAY:     exit=66

// OTHER:      ilgen: error: {{.*}}.tmp.x and {{.*}}.tmp.o were recorded from different binaries ({{.*}}merge_two_runs_race.c.tmp and {{.*}}merge_two_runs_race.c.tmp.other, or the same path rebuilt); detect runs of one binary together, or each trace alone
// OTHER-NEXT: exit=2
// TWICE:      ilgen: error: {{.*}}.tmp.x and {{.*}}.tmp.x/ are the same trace directory; give each run once
// TWICE-NEXT: exit=2
