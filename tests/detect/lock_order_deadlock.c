// Lock-order inversion recorded without deadlocking: thread 1 takes a then b, thread 2 takes b
// then a, and the test barrier (not a sync event) holds thread 2 back until thread 1 has released
// both. ilgen must predict the one deadlock: thread 1 holds a and waits for b while thread 2
// holds b and waits for a, with both lock sites named. No data is shared: no race.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --no-replay --format json %t.trace; echo "exit=$?"' | FileCheck --check-prefix=JSON %s
#include <pthread.h>

#include "ilgen_test.h"

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t started1, started2, go, first_done;

void *ab(void *arg) {
  __ilgen_testonly_barrier_wait(&started1);
  __ilgen_testonly_barrier_wait(&go);
  pthread_mutex_lock(&a);
  pthread_mutex_lock(&b);
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  __ilgen_testonly_barrier_wait(&first_done);
  return arg;
}

void *ba(void *arg) {
  __ilgen_testonly_barrier_wait(&started2);
  __ilgen_testonly_barrier_wait(&first_done);
  pthread_mutex_lock(&b);
  pthread_mutex_lock(&a);
  pthread_mutex_unlock(&a);
  pthread_mutex_unlock(&b);
  return arg;
}

int main(void) {
  pthread_t t1, t2;
  __ilgen_testonly_barrier_init(&started1, 2);
  __ilgen_testonly_barrier_init(&started2, 2);
  __ilgen_testonly_barrier_init(&go, 2);
  __ilgen_testonly_barrier_init(&first_done, 2);
  // Both threads have started before thread 1 takes its locks: the observed order, which the
  // candidate schedule keeps where it can, is the same in every run.
  pthread_create(&t1, NULL, ab, NULL);
  __ilgen_testonly_barrier_wait(&started1);
  pthread_create(&t2, NULL, ba, NULL);
  __ilgen_testonly_barrier_wait(&started2);
  __ilgen_testonly_barrier_wait(&go);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return 0;
}

// CHECK:      ilgen: 1 candidate(s): 0 race(s), 1 deadlock(s)
// CHECK:      candidate 1: deadlock
// main waits in its join of thread 1, which waits for b held by thread 2, which waits for a.
// CHECK-NEXT:   thread 0 blocked in join thread 1 at {{.*}}lock_order_deadlock.c:52 in main
// CHECK-NEXT:   thread 1 blocked in lock b (0x[[#%x,B:]]) at {{.*}}lock_order_deadlock.c:22 in ab (site [[#]])
// CHECK-NEXT:   thread 2 blocked in lock a (0x[[#%x,A:]]) at {{.*}}lock_order_deadlock.c:33 in ba (site [[#]])
// CHECK-NEXT:   schedule:
// CHECK-NEXT:     thread 0: fork thread 1 at {{.*}}lock_order_deadlock.c:47 in main
// CHECK-NEXT:     thread 1: start
// CHECK-NEXT:     thread 0: fork thread 2 at {{.*}}lock_order_deadlock.c:49 in main
// CHECK-NEXT:     thread 2: start
// CHECK-NEXT:     thread 1: lock a (0x[[#%x,A]]) at {{.*}}lock_order_deadlock.c:21 in ab
// CHECK-NEXT:     thread 2: lock b (0x[[#%x,B]]) at {{.*}}lock_order_deadlock.c:32 in ba
// CHECK-NEXT: candidates written to
// CHECK-NEXT: exit=66
//
// JSON:      "kind": "deadlock",
// JSON-NEXT: "blocked": [
// JSON-NEXT:   {
// JSON-NEXT:     "tid": 0,
// JSON-NEXT:     "op": "join",
// JSON:        {
// JSON-NEXT:     "tid": 1,
// JSON-NEXT:     "op": "lock",
// JSON-NEXT:     "object": [[#%u,B:]],
// JSON:        {
// JSON-NEXT:     "tid": 2,
// JSON-NEXT:     "op": "lock",
// JSON-NEXT:     "object": [[#%u,A:]],
// JSON:      "schedule": {
// JSON:      exit=66

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
