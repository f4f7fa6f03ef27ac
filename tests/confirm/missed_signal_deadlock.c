// A missed signal: the waiter calls pthread_cond_wait with no predicate to re-check, so a signal
// sent before it waits is lost and the waiter (and main, joining it) hang. The recorded run waits
// first (the test barrier holds main until the waiter holds m, and m until it waits), so nothing
// hangs; ilgen predicts the order where main signals first, replays it, and the replay hangs:
// a confirmed deadlock naming the join and the wait. Under replay (MISSED_REPLAY set) the
// barrier is skipped.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env MISSED_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
//
// The same program with the wait in a predicate loop has no such schedule.
// RUN: %ilgen cc -g -O0 -DLOOP -I %testinc %s -o %t.loop
// RUN: rm -rf %t.loop.trace && env ILGEN_OPTIONS=trace_dir=%t.loop.trace %t.loop
// RUN: env MISSED_REPLAY=1 sh -c '%ilgen detect %t.loop.trace; echo "exit=$?"' | FileCheck %s --check-prefix=LOOP
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
ilgen_test_barrier_t holding;
int replaying, ready;

void *waiter(void *arg) {
  pthread_mutex_lock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&holding);
#ifdef LOOP
  while (!ready)
#endif
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("MISSED_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&holding, 2);
  pthread_create(&t, NULL, waiter, NULL);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&holding);
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      WARNING: ilgen: deadlock (pid={{[0-9]+}})
// CHECK-NEXT:   Main thread is blocked in join of thread T1:
// CHECK-NEXT:     #0 main /{{.*}}missed_signal_deadlock.c:49:3
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 is blocked in wait of 'c' (0x{{[0-9a-f]+}}):
// CHECK-NEXT:     #0 waiter /{{.*}}missed_signal_deadlock.c:33:5
// CHECK:      Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK:          T0 signal 'c' at /{{.*}}missed_signal_deadlock.c:47
// CHECK:          T1 wait 'c' at /{{.*}}missed_signal_deadlock.c:33
// CHECK:      SUMMARY: ilgen: deadlock /{{.*}}missed_signal_deadlock.c:49 in main
// CHECK:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 1 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66

// LOOP:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// LOOP-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// LOOP-NEXT: exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
