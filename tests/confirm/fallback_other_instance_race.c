// A candidate whose schedule replay cannot follow, and its fallback: another instance of the same
// two sites, whose schedule it can. main writes `data` through put() twice, before and after it
// sets `ready` under m; task reads `ready` under m and, only if it was set, writes `data` under
// n. The recorded run (forced by the test barrier) has main's critical section first: task saw
// `ready` set. Both of main's writes race with task's, at the same two lines.
//
// With --no-reads-from the analysis keeps no order for what task's read of `ready` saw (by
// default it does: the read decides whether task locks n, and the first instance is then never
// predicted). The first instance's schedule runs task's critical section before main's: task
// reads `ready` unset, skips lock n and ends, where the schedule expects the lock; the replay
// diverges at once, whatever the timing. Its fallback, the second instance, keeps main's
// critical section first and confirms the race. With --fallbacks 0 the pair is not confirmed.
// Under replay (FALLBACK_REPLAY set) the barrier `ready_set` is skipped (the schedule orders);
// the barrier `data_written`, met once the schedule is done, makes main's second write the later
// access of the race in every run (the whole and the sharded reports then agree).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay --no-reads-from %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICTED
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --no-reads-from --show-all --stats %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --no-reads-from --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --no-reads-from --fallbacks 0 --show-all %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=READS-FROM
//
// Sharded (the race unit in shard 1, the deadlock unit in shard 2), the candidate and its
// fallback replay as unsharded, and the merged report is the unsharded one.
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --no-reads-from --shard 1/2 --format json %t.trace > %t.1.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: env FALLBACK_REPLAY=1 sh -c '%ilgen detect --no-reads-from --shard 2/2 --format json %t.trace > %t.2.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: sh -c '%ilgen merge --format json %t.2.json %t.1.json > %t.merged.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/../Inputs/same_report.py %t.json %t.merged.json | FileCheck %s --check-prefix=SAME
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int data, ready;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, n = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t ready_set, data_written;
int replaying;

static void put(int v) { data = v; }

void *task(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&ready_set);
  pthread_mutex_lock(&m);
  int go = ready;
  pthread_mutex_unlock(&m);
  if (go) {
    pthread_mutex_lock(&n);
    data = 1;
    pthread_mutex_unlock(&n);
    __ilgen_testonly_barrier_wait(&data_written);
  }
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("FALLBACK_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&ready_set, 2);
  __ilgen_testonly_barrier_init(&data_written, 2);
  pthread_create(&t, NULL, task, NULL);
  put(2);
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&ready_set);
  __ilgen_testonly_barrier_wait(&data_written);
  put(3);
  pthread_join(t, NULL);
  return 0;
}

// PREDICTED:      ilgen: 2 candidate(s): 1 race(s), 0 deadlock(s), 1 fallback(s) of race candidates
// PREDICTED:        fallbacks: 1 race pair(s) kept as fallbacks of the candidate at their two sites
// PREDICTED:      candidate 1: data race on data ({{.*}}) (4 bytes)
// PREDICTED-NEXT:   write by thread 0 at {{.*}}fallback_other_instance_race.c:43 in put
// PREDICTED-NEXT:   write by thread 1 at {{.*}}fallback_other_instance_race.c:53 in task
// PREDICTED-NEXT:   schedule:
// PREDICTED-NEXT:     thread 0: fork thread 1
// PREDICTED-NEXT:     thread 1: start
// PREDICTED-NEXT:     thread 1: lock m {{.*}}fallback_other_instance_race.c:48 in task
// PREDICTED-NEXT:     thread 1: unlock m {{.*}}fallback_other_instance_race.c:50 in task
// PREDICTED-NEXT:     thread 1: lock n {{.*}}fallback_other_instance_race.c:52 in task
// PREDICTED-EMPTY:
// PREDICTED-NEXT: candidate 2: data race on data ({{.*}}) (4 bytes), fallback of candidate 1
// PREDICTED-NEXT:   write by thread 0 at {{.*}}fallback_other_instance_race.c:43 in put
// PREDICTED-NEXT:   write by thread 1 at {{.*}}fallback_other_instance_race.c:53 in task
// PREDICTED-NEXT:   schedule:
// PREDICTED-NEXT:     thread 0: fork thread 1
// Task's start may come before or after main's lock: it waited for main at the test barrier.
// PREDICTED:          thread 0: lock m {{.*}}fallback_other_instance_race.c:67 in main
// PREDICTED-NEXT:     thread 0: unlock m {{.*}}fallback_other_instance_race.c:69 in main
// PREDICTED:          thread 1: lock m {{.*}}fallback_other_instance_race.c:48 in task
// PREDICTED-NEXT:     thread 1: unlock m {{.*}}fallback_other_instance_race.c:50 in task
// PREDICTED-NEXT:     thread 1: lock n {{.*}}fallback_other_instance_race.c:52 in task
// PREDICTED-NEXT: candidates written to
// PREDICTED-NEXT: exit=66

// The race is reported once, from the fallback's replay: main's second write (put called at 73).
// CHECK:          WARNING: ilgen: data race
// CHECK-DAG:        #0 task {{.*}}fallback_other_instance_race.c:53
// CHECK-DAG:        #0 put {{.*}}fallback_other_instance_race.c:43
// CHECK-DAG:        #1 main {{.*}}fallback_other_instance_race.c:73
// CHECK:            Schedule that exposed it (candidate 2, replayed in {{.*}}replay-2):
// CHECK:          SUMMARY: ilgen: data race
// CHECK-NOT:      WARNING
// CHECK:          ilgen: 2 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// CHECK-NEXT:     ilgen: fallback schedules: 1 replayed, 1 confirmed, 0 not replayed (a replay at their two sites confirmed first)
// CHECK-NEXT:     ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT:     candidate 1: race at {{.*}}fallback_other_instance_race.c:43 and {{.*}}fallback_other_instance_race.c:53: infeasible: the schedule could not be followed: step 4 expects T1 operation #3 to be lock, but it is end (no site)
// CHECK-NEXT:     ilgen: analysis:
// CHECK:            fallbacks: 1 race pair(s) kept as fallbacks of the candidate at their two sites
// CHECK:          ilgen: replay: 1 of 2 replay(s) diverged (divergence rate 50%)
// CHECK-NEXT:     ilgen: replay: fallback schedules: 1 replayed, 1 confirmed, 0 not replayed (a replay at their two sites confirmed first)
// CHECK-NEXT:     exit=66

// EXIT66: exit=66
// EXIT0: exit=0
// VALID: valid: ilgen report, format version 11
// JSON:      "counts": {
// JSON-NEXT:   "candidates": 2,
// JSON-NEXT:   "confirmed_races": 1,
// JSON:        "infeasible": 1,
// JSON:        "fallbacks_replayed": 1,
// JSON-NEXT:   "fallbacks_confirmed": 1,
// JSON-NEXT:   "fallbacks_skipped": 0
// JSON:      "candidates": [
// JSON-NEXT:   2
// JSON-NEXT: ],
// JSON:      "unconfirmed": [
// JSON-NEXT:   {
// JSON-NEXT:     "run": 1,
// JSON-NEXT:     "candidate": 1,
// JSON-NEXT:     "predicted": "race",
// JSON-NEXT:     "verdict": "infeasible",

// Without fallbacks the one candidate of the pair diverges and nothing is confirmed.
// NONE-NOT:  WARNING
// NONE:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// NONE-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// NONE-NEXT: candidate 1: race at {{.*}}fallback_other_instance_race.c:43 and {{.*}}fallback_other_instance_race.c:53: infeasible: {{.*}} expects T1 operation #3 to be lock, but it is end (no site)
// NONE-NEXT: exit=0

// By default the read of `ready` keeps its writer: only the second instance is predicted, and
// confirmed without a fallback.
// READS-FROM:      WARNING: ilgen: data race
// READS-FROM:        Schedule that exposed it (candidate 1, replayed in {{.*}}replay-1):
// READS-FROM:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// READS-FROM-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// READS-FROM-NEXT: exit=66

// SAME: same
