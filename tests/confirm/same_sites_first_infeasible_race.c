// The candidates at one pair of sites are replayed in turn until one confirms their race: here
// the first one's replay cannot, and the next object's does. main writes block 0, 1 and 2
// through put(); filler writes each through fill() under `work`, but only if it read `opened` set
// under `gate`. main writes block 0 before it sets `opened`, blocks 1 and 2 after. The recorded
// run (forced by the test barrier) has main's critical section first: filler saw `opened` set.
// Each block races at the same two lines (put's and fill's): three objects, three candidates at
// one pair of sites.
//
// With --no-reads-from the analysis keeps no order for what filler's read of `opened` saw, and
// candidate 1 (block 0) runs filler's critical section on `gate` before main's: filler reads
// `opened` unset and ends where the schedule expects it to lock `work`; the replay diverges at
// once, whatever the timing. Candidate 2 (block 1) keeps main's critical section first and
// confirms the race; candidate 3 (block 2) is then not replayed. Under replay (SAME_SITES_REPLAY
// set) the barrier `opened_seen` is skipped (the schedule orders); `filled`, met once the schedule
// is done, makes main's writes after it the later accesses in every run.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay --no-reads-from %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICTED
// RUN: env SAME_SITES_REPLAY=1 sh -c '%ilgen detect -q --no-reads-from --show-all %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: env SAME_SITES_REPLAY=1 sh -c '%ilgen detect --no-reads-from --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); c=r["counts"]; print("counts", c["candidates"], c["confirmed_races"], c["infeasible"], c["not_replayed"]); [print("finding", f["candidates"]) for f in r["findings"]]; [print("unconfirmed", u["candidate"], u["verdict"]) for u in r["unconfirmed"]]; [print("not replayed", n["candidate"], "confirmed by", n["confirmed_by"]) for n in r["not_replayed"]]' %t.json | FileCheck %s --check-prefix=JSON
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

// Blocks 64 bytes apart: three shared objects, not one.
int block[3][16];
int opened;
pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER, work = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t opened_seen, filled;
int replaying;

static void put(int *p, int v) { *p = v; }

static void fill(int *p) { *p = 1; }

// Fills every block, if main had opened the gate when it looked.
void *filler(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&opened_seen);
  pthread_mutex_lock(&gate);
  int open = opened;
  pthread_mutex_unlock(&gate);
  if (!open)
    return arg;
  pthread_mutex_lock(&work);
  for (int i = 0; i < 3; i++)
    fill(block[i]);
  pthread_mutex_unlock(&work);
  __ilgen_testonly_barrier_wait(&filled);
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("SAME_SITES_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&opened_seen, 2);
  __ilgen_testonly_barrier_init(&filled, 2);
  pthread_create(&t, NULL, filler, NULL);
  put(block[0], 2);
  pthread_mutex_lock(&gate);
  opened = 1;
  pthread_mutex_unlock(&gate);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&opened_seen);
  __ilgen_testonly_barrier_wait(&filled);
  for (int i = 1; i < 3; i++)
    put(block[i], 2 + i);
  pthread_join(t, NULL);
  return 0;
}

// PREDICTED:      ilgen: 3 candidate(s): 3 race(s), 0 deadlock(s)
// PREDICTED:      candidate 1: data race on block ({{.*}}) (4 bytes)
// PREDICTED-NEXT:   write by thread 0 at {{.*}}same_sites_first_infeasible_race.c:{{36|38}} in {{put|fill}}
// PREDICTED:      candidate 2: data race on block+64 ({{.*}}) (4 bytes)
// PREDICTED:      candidate 3: data race on block+128 ({{.*}}) (4 bytes)
// PREDICTED:      exit=66

// The race is reported once, from candidate 2's replay: main's write to block 1 (put called at 71).
// CHECK:          WARNING: ilgen: data race
// CHECK-DAG:        #0 put {{.*}}same_sites_first_infeasible_race.c:36
// CHECK-DAG:        #1 main {{.*}}same_sites_first_infeasible_race.c:71
// CHECK-DAG:        #0 fill {{.*}}same_sites_first_infeasible_race.c:38
// CHECK:            Schedule that exposed it (candidate 2, replayed in {{.*}}replay-2):
// CHECK:          SUMMARY: ilgen: data race
// CHECK-NOT:      WARNING
// CHECK:          ilgen: 2 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// CHECK-NEXT:     ilgen: 1 candidate(s) not replayed: an earlier candidate at the same two sites confirmed their race
// CHECK-NEXT:     ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT:     candidate 1: race at {{.*}}same_sites_first_infeasible_race.c:36 and {{.*}}same_sites_first_infeasible_race.c:38: infeasible: the schedule could not be followed: step 4 expects T1 operation #3 to be lock, but it is end (no site)
// CHECK-NEXT:     candidate 3: race at {{.*}}:36 and {{.*}}:38: not replayed: candidate 2 confirmed the race at these two sites
// CHECK-NEXT:     exit=66

// EXIT66: exit=66
// VALID: valid: ilgen report, format version 11
// JSON:      counts 2 1 1 1
// JSON-NEXT: finding [2]
// JSON-NEXT: unconfirmed 1 infeasible
// JSON-NEXT: not replayed 3 confirmed by 2
