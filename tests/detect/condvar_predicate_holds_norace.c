// The producer/consumer of condvar_wait_norace.c where no wait is ever called: the test barrier
// (not a sync event) holds the consumer back until the producer has filled every slot, so each of
// the consumer's wait loops finds its predicate already true. Only the pass's wait-loop markers
// tell ilgen that each loop exit follows a signal; the payload, written and read outside the
// mutex, must still come out race-free.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
//
// At -O2 loop rotation moves each loop's first predicate test out of the loop; the markers must
// still surround it (the pass inserts them before rotation), or the payload looks racy.
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t.O2
// RUN: rm -rf %t.O2.trace && env ILGEN_OPTIONS=trace_dir=%t.O2.trace %t.O2
// RUN: %ilgen dump %t.O2.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.O2.trace; echo "exit=$?"' | FileCheck --check-prefix=O2 %s
#include <pthread.h>

#include "ilgen_test.h"

enum { ITEMS = 3 };

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
int count;           // under m
int payload[ITEMS];  // NOT under m
int sum;
ilgen_test_barrier_t all_produced;

void *producer(void *arg) {
  for (int i = 0; i < ITEMS; i++) {
    payload[i] = 10 * (i + 1);
    pthread_mutex_lock(&m);
    count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
  }
  __ilgen_testonly_barrier_wait(&all_produced);
  return arg;
}

void *consumer(void *arg) {
  __ilgen_testonly_barrier_wait(&all_produced);
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&m);
    while (count == 0)
      pthread_cond_wait(&not_empty, &m);
    count--;
    pthread_mutex_unlock(&m);
    sum += payload[i];
  }
  return arg;
}

int main(void) {
  pthread_t p, c;
  __ilgen_testonly_barrier_init(&all_produced, 2);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return sum == 60 ? 0 : 1;
}

// The consumer (T1) leaves each wait loop without calling pthread_cond_wait.
// DUMP:     T1 thread parent=T0 child=0
// DUMP-NOT: T1 {{wait|wake}} not_empty
// DUMP:     T1 waitloop_enter not_empty
// DUMP-NOT: T1 {{wait|wake}} not_empty
// DUMP:     T1 waitloop_exit not_empty
// DUMP-NOT: T1 {{wait|wake}} not_empty
// DUMP:     T1 waitloop_exit not_empty
// DUMP-NOT: T1 {{wait|wake}} not_empty
// DUMP:     T1 waitloop_exit not_empty
// DUMP-NOT: T1 {{wait|wake}} not_empty
// DUMP:     T1 end
//
// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 3 threads,
// payload[0..2] and sum: ordered by happens-before (signal → wait-loop exit); count: by its mutex.
// CHECK-NEXT:   shared objects: 5 (0 without a conflicting pair, 4 removed by happens-before, 1 by lockset, 0 left)
// CHECK-NOT:  candidate 1
// CHECK:      exit=0

// O2:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// O2-NOT:  candidate 1
// O2:      exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
