// One race at the same two lines on six heap blocks: main creates a worker per block and writes
// the block's counter while the worker writes it too. The analysis predicts one candidate per
// block (a unit each), all at the same two sites; the report shows one finding per pair of lines,
// so replay tries them in turn: candidate 1's replay confirms the race, and candidates 2 to 6 are
// not replayed (no schedule file, no replay directory), each listed with the candidate that
// confirmed its pair, in the text (--show-all) and the JSON.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICTED
// RUN: sh -c '%ilgen detect --show-all --stats %t.trace 2>%t.err; echo "exit=$?"' | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPLAYED < %t.err
// RUN: ls %t.trace | FileCheck %s --check-prefix=FILES
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=SHORT
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["counts"]; print("counts", c["candidates"], c["confirmed_races"], c["not_replayed"], c["fallbacks_skipped"]); [print("finding", f["candidates"]) for f in r["findings"]]; [print("not replayed", n["candidate"], "confirmed by", n["confirmed_by"], [l["line"] for l in n["locations"]]) for n in r["not_replayed"]]' %t.json | FileCheck %s --check-prefix=JSON
#include <pthread.h>
#include <stdlib.h>

struct counter {
  long hits;
};

void *worker(void *arg) {
  struct counter *c = arg;
  c->hits = 1;
  return NULL;
}

int main(void) {
  pthread_t t[6];
  struct counter *c[6];
  for (int i = 0; i < 6; i++) {
    c[i] = malloc(sizeof *c[i]);
    pthread_create(&t[i], NULL, worker, c[i]);
    c[i]->hits = 2;
  }
  for (int i = 0; i < 6; i++)
    pthread_join(t[i], NULL);
  return 0;
}

// PREDICTED: ilgen: 6 candidate(s): 6 race(s), 0 deadlock(s)
// PREDICTED: exit=66

// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:    #0 main {{.*}}same_sites_objects_race.c:37
// CHECK-DAG:    #0 worker {{.*}}same_sites_objects_race.c:27
// CHECK:        Schedule that exposed it (candidate 1, replayed in {{.*}}replay-1):
// CHECK-NOT:  WARNING
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 5 candidate(s) not replayed: an earlier candidate at the same two sites confirmed their race
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: candidate 2: race at {{.*}}same_sites_objects_race.c:37 and {{.*}}same_sites_objects_race.c:27: not replayed: candidate 1 confirmed the race at these two sites
// CHECK-NEXT: candidate 3: race at {{.*}}:37 and {{.*}}:27: not replayed: candidate 1 confirmed the race at these two sites
// CHECK-NEXT: candidate 4: race at {{.*}}:37 and {{.*}}:27: not replayed: candidate 1 confirmed the race at these two sites
// CHECK-NEXT: candidate 5: race at {{.*}}:37 and {{.*}}:27: not replayed: candidate 1 confirmed the race at these two sites
// CHECK-NEXT: candidate 6: race at {{.*}}:37 and {{.*}}:27: not replayed: candidate 1 confirmed the race at these two sites
// CHECK-NEXT: ilgen: analysis:
// CHECK:        race pairs: 6 (0 removed by happens-before, 0 by lockset, 6 left)
// CHECK:      ilgen: replay: 0 of 1 replay(s) diverged (divergence rate 0%)
// CHECK-NEXT: exit=66

// REPLAYED:     ilgen: replaying candidate 1:
// REPLAYED-NOT: ilgen: replaying candidate

// FILES-NOT: replay-2
// FILES:     replay-1
// FILES-NOT: replay-{{[2-6]}}
// FILES:     schedule-1.json
// FILES-NOT: schedule-{{[2-6]}}

// SHORT:      ilgen: 5 candidate(s) not replayed: an earlier candidate at the same two sites confirmed their race; --show-all lists them
// SHORT-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// SHORT-NEXT: exit=66

// EXIT66: exit=66
// VALID: valid: ilgen report, format version 11
// JSON:      counts 1 1 5 0
// JSON-NEXT: finding [1]
// JSON-NEXT: not replayed 2 confirmed by 1 [37, 27]
// JSON-NEXT: not replayed 3 confirmed by 1 [37, 27]
// JSON-NEXT: not replayed 4 confirmed by 1 [37, 27]
// JSON-NEXT: not replayed 5 confirmed by 1 [37, 27]
// JSON-NEXT: not replayed 6 confirmed by 1 [37, 27]
