// The paper's Listing 1 recorded in the order that hides its race (main takes m first, forced by
// the test barrier): `ilgen detect` predicts one candidate, replays it, and the online detector
// confirms the race on y between task's `y++` and main's second `y++`. The report is TSan-shaped:
// both accesses with function file:line:col, the global, the thread's creation site, the schedule
// and a SUMMARY line; exit 66. The load and the store of task's `y++` both race with main's store:
// one finding, deduplicated by source lines.
//
// Under replay (LISTING1_REPLAY set) the test barrier, which is not a sync operation, only makes
// main's `y++` come first in real time, so that the same access is the second one in every run
// (as in tests/replay/listing1_race.c).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env LISTING1_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: test -f %t.trace/replay-1/replay-outcome.json
//
// --show-all adds nothing: every candidate was confirmed.
// RUN: env LISTING1_REPLAY=1 sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' \
// RUN:   | %S/Inputs/normalize.sh > %t.all
// RUN: %S/Inputs/normalize.sh < %t.text | diff - %t.all
//
// The same detect and replay 20 times gives the same report as the first (pid and addresses aside).
// RUN: bash -c 'for i in $(seq 20); do env LISTING1_REPLAY=1 %ilgen detect %t.trace > %t.again; echo "exit=$?" >> %t.again; %S/Inputs/normalize.sh < %t.again | cmp -s - <(%S/Inputs/normalize.sh < %t.text) && echo same || { echo differs; diff <(%S/Inputs/normalize.sh < %t.text) <(%S/Inputs/normalize.sh < %t.again); }; done' \
// RUN:   | sort | uniq -c | FileCheck %s --check-prefix=REPEAT
//
// JSON and SARIF 2.1.0, each validated against its schema.
// RUN: env LISTING1_REPLAY=1 sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=JSON-VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: env LISTING1_REPLAY=1 sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=SARIF-VALID
// RUN: python3 %S/Inputs/sarif_summary.py %t.sarif | FileCheck %s --check-prefix=SARIF
//
// `ilgen replay TRACE:N` replays the one candidate and prints the same finding; exit 66.
// RUN: env LISTING1_REPLAY=1 sh -c '%ilgen replay %t.trace:1; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int x, y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t order;
int replaying;

void *task(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("LISTING1_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&order, 2);
  y++;
  pthread_create(&t, NULL, task, NULL);
  y++;
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[Y:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 task /{{.*}}listing1_race.c:55:4
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[Y]] by main thread:
// CHECK-NEXT:     #0 main /{{.*}}listing1_race.c:65:4
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'y' of size 4 at 0x[[Y]].
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 (tid=1) created by main thread at:
// CHECK-NEXT:     #0 main /{{.*}}listing1_race.c:64:3
// CHECK-EMPTY:
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 fork T1 at /{{.*}}listing1_race.c:64
// CHECK-NEXT:     2. T1 start
// CHECK-NEXT:     3. T1 lock 'm' at /{{.*}}listing1_race.c:50
// CHECK-NEXT:     4. T1 unlock 'm' at /{{.*}}listing1_race.c:52
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}listing1_race.c:55 in task
// CHECK-NEXT: ==================
// CHECK-NEXT: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
// CHECK-NOT:  {{.}}

// REPEAT:     {{^ *}}20 same{{$}}
// REPEAT-NOT: {{.}}

// EXIT66: exit=66
// JSON-VALID: valid: ilgen report, format version 11
// SARIF-VALID: valid: Static Analysis Results Format (SARIF) Version 2.1.0-rtm.5 JSON Schema

// JSON:      "format_version": 11,
// JSON:      "counts": {
// JSON-NEXT:   "candidates": 1,
// JSON-NEXT:   "confirmed_races": 1,
// JSON-NEXT:   "confirmed_deadlocks": 0,
// JSON-NEXT:   "atomicity_candidates": 0,
// JSON-NEXT:   "confirmed_atomicity": 0,
// JSON-NEXT:   "no_error": 0,
// JSON-NEXT:   "infeasible": 0,
// JSON-NEXT:   "failed": 0,
// JSON-NEXT:   "observed_deadlocks": 0,
// JSON-NEXT:   "fallbacks_replayed": 0,
// JSON-NEXT:   "fallbacks_confirmed": 0,
// JSON-NEXT:   "fallbacks_skipped": 0,
// JSON-NEXT:   "not_replayed": 0
// JSON-NEXT: },
// JSON-NEXT: "findings": [
// JSON-NEXT:   {
// JSON-NEXT:     "kind": "race",
// JSON-NEXT:     "fingerprint": "{{[0-9a-f]+}}",
// JSON-NEXT:     "run": 1,
// JSON-NEXT:     "runs": [
// JSON-NEXT:       1
// JSON-NEXT:     ],
// JSON-NEXT:     "candidates": [
// JSON-NEXT:       1
// JSON-NEXT:     ],
// JSON:          "current": {
// JSON-NEXT:       "tid": 1,
// JSON-NEXT:       "kind": "read",
// JSON:              "line": 55,
// JSON:          "previous": {
// JSON-NEXT:       "tid": 0,
// JSON-NEXT:       "kind": "write",
// JSON:              "line": 65,
// JSON:          "object": {
// JSON-NEXT:       "name": "y",
// JSON:      "unconfirmed": []

// SARIF:      version 2.1.0 runs 1
// SARIF-NEXT: tool ilgen
// SARIF-NEXT: rule ilgen/data-race
// SARIF-NEXT: rule ilgen/deadlock
// SARIF-NEXT: rule ilgen/atomicity-violation
// SARIF-NEXT: result ilgen/data-race error listing1_race.c:55:4
// SARIF-NEXT:   related listing1_race.c:65:4 previous write of size 4 by T0
// SARIF-NEXT:   related listing1_race.c:64:3 thread T1 created here
// SARIF-NEXT:   flow T0:listing1_race.c:64:3@1 T1:-@2 T1:listing1_race.c:50:3@3 T1:listing1_race.c:52:3@4 T0:listing1_race.c:65:4@5 T1:listing1_race.c:55:4@6
// SARIF-NOT:  result

// REPLAY:      WARNING: ilgen: data race (pid={{[0-9]+}})
// REPLAY-NEXT:   Read of size 4 at 0x{{[0-9a-f]+}} by thread T1:
// REPLAY-NEXT:     #0 task /{{.*}}listing1_race.c:55:4
// REPLAY:      SUMMARY: ilgen: data race /{{.*}}listing1_race.c:55 in task
// REPLAY:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s)
// REPLAY:      exit=66

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace

// A corrupt schedule file is bad input (exit 2), not a replay that diverged (exit 3).
// RUN: rm -rf %t.badsched && cp -r %t.trace %t.badsched
// RUN: echo '{"format_version": 1' > %t.badsched/schedule-1.json
// RUN: sh -c '%ilgen replay %t.badsched:1; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=BADSCHED
// BADSCHED:      ilgen: error: {{.*}}.badsched/schedule-1.json is not an ilgen schedule: it is not JSON
// BADSCHED-NEXT: exit=2
// A schedule made for another build is bad input too, refused before anything runs.
// RUN: sed -e 's/"build_id": "[0-9a-f]*"/"build_id": "0123abcd"/' %t.trace/schedule-1.json > %t.badsched/schedule-1.json
// RUN: sh -c '%ilgen replay %t.badsched:1; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=OTHERSCHED
// OTHERSCHED:      ilgen: error: {{.*}}.badsched/schedule-1.json was made for another build (build id "0123abcd", the trace's is "{{[0-9a-f]+}}"); run `ilgen detect {{.*}}.badsched` again
// OTHERSCHED-NEXT: exit=2
