// A failed pthread_mutex_trylock is a step of the schedule: it can happen only while another
// thread holds the mutex. The worker counts a dropped event in `dropped` without the lock when its
// trylock fails; the reporter reads `dropped` under the lock. Recorded (forced by the test
// barriers): main holds m, the worker's first trylock fails, main unlocks, the worker's second
// trylock succeeds, then the reporter locks: the worker's unlock orders its increment before the
// reporter's read, and the run shows no race. detect predicts the reporter's critical section
// right after main's, with the failed trylock inside main's: main's lock before it, main's unlock
// (which the reporter's lock needs) after it. Replayed, the trylock fails every time (the worker
// says so on its stdout) and the race on `dropped` is confirmed every time.
//
// Under replay (TRYLOCK_REPLAY set) the test barriers are skipped: only the schedule orders.
//
// Each thread is created only once the one before started, so the recorded order is fixed.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: env TRYLOCK_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: FileCheck %s --check-prefix=REPLAYED < %t.trace/replay-1/stdout.txt
//
// Ten more detects, each replaying the candidate: the trylock fails and the race is confirmed in
// every one.
// RUN: bash -c 'for i in $(seq 10); do env TRYLOCK_REPLAY=1 %ilgen detect %t.trace > /dev/null; echo "exit=$?"; cat %t.trace/replay-1/stdout.txt; done' \
// RUN:   | sort | uniq -c | FileCheck %s --check-prefix=REPEAT
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ilgen_test.h"

long dropped;
int logged;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t up1, up2, held, tried, released, done;
int replaying;

static void wait_for(ilgen_test_barrier_t *b) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(b);
}

// Never blocks: logs under the lock, or counts the event as dropped without it.
static int log_event(void) {
  if (pthread_mutex_trylock(&m) == 0) {
    logged++;
    pthread_mutex_unlock(&m);
    return 1;
  }
  dropped++;
  return 0;
}

void *worker(void *arg) {
  wait_for(&up1);
  wait_for(&held);
  int first = log_event();
  wait_for(&tried);
  wait_for(&released);
  log_event();
  wait_for(&done);
  printf("first trylock %s\n", first ? "acquired" : "failed");
  return arg;
}

void *reporter(void *arg) {
  wait_for(&up2);
  wait_for(&done);
  pthread_mutex_lock(&m);
  long seen = dropped;
  pthread_mutex_unlock(&m);
  return (void *)seen;
}

int main(void) {
  pthread_t w, r;
  replaying = getenv("TRYLOCK_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&up1, 2);
  __ilgen_testonly_barrier_init(&up2, 2);
  __ilgen_testonly_barrier_init(&held, 2);
  __ilgen_testonly_barrier_init(&tried, 2);
  __ilgen_testonly_barrier_init(&released, 2);
  __ilgen_testonly_barrier_init(&done, 2);
  pthread_create(&w, NULL, worker, NULL);
  wait_for(&up1);
  pthread_create(&r, NULL, reporter, NULL);
  wait_for(&up2);
  pthread_mutex_lock(&m);
  wait_for(&held);
  wait_for(&tried);
  pthread_mutex_unlock(&m);
  wait_for(&released);
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  return 0;
}

// RECORDED: first trylock failed

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK:        Location is global 'dropped' of size 8 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 fork T1 at /{{.*}}trylock_fallback_race.c:83
// CHECK-NEXT:     2. T1 start
// CHECK-NEXT:     3. T0 fork T2 at /{{.*}}trylock_fallback_race.c:85
// CHECK-NEXT:     4. T2 start
// CHECK-NEXT:     5. T0 lock 'm' at /{{.*}}trylock_fallback_race.c:87
// CHECK-NEXT:     6. T1 trylock 'm' at /{{.*}}trylock_fallback_race.c:44
// CHECK-NEXT:     7. T0 unlock 'm' at /{{.*}}trylock_fallback_race.c:90
// CHECK-NEXT:     8. T2 lock 'm' at /{{.*}}trylock_fallback_race.c:68
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}trylock_fallback_race.c:{{49|69}} in {{log_event|reporter}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// REPLAYED: first trylock failed

// REPEAT:     {{^ *}}10 exit=66{{$}}
// REPEAT-NEXT: {{^ *}}10 first trylock failed{{$}}
// REPEAT-NOT: {{.}}

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
