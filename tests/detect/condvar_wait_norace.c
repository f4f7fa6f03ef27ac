// Producer/consumer handing items over through a mutex and two condition variables, where the
// waits ARE called: the consumer is forced (test barrier, not a sync event) to be inside
// pthread_cond_wait before the producer can take the mutex. The item payload is written and read
// outside the mutex; only the signal→wait edges order those accesses (the filter ignores mutex
// edges), so ilgen must match each wait to the signal that released it and find no candidate.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --no-replay --format json %t.trace; echo "exit=$?"' | FileCheck --check-prefix=JSON %s
#include <pthread.h>

#include "ilgen_test.h"

enum { ITEMS = 3 };

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
int full;            // under m
int payload[ITEMS];  // NOT under m: written before the handoff, read after it
int sum;             // consumer's result, read by main after the join
ilgen_test_barrier_t consumer_waits;

void *producer(void *arg) {
  for (int i = 0; i < ITEMS; i++) {
    payload[i] = 10 * (i + 1);
    // Item 0: the consumer holds m until it is inside pthread_cond_wait, so this lock returns
    // only once the consumer waits.
    if (i == 0)
      __ilgen_testonly_barrier_wait(&consumer_waits);
    pthread_mutex_lock(&m);
    while (full)
      pthread_cond_wait(&not_full, &m);
    full = 1;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
  }
  return arg;
}

void *consumer(void *arg) {
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&m);
    int first = 1;
    while (!full) {
      if (i == 0 && first)
        __ilgen_testonly_barrier_wait(&consumer_waits);
      first = 0;
      pthread_cond_wait(&not_empty, &m);
    }
    full = 0;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
    sum += payload[i];
  }
  return arg;
}

int main(void) {
  pthread_t p, c;
  __ilgen_testonly_barrier_init(&consumer_waits, 2);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  return sum == 60 ? 0 : 1;
}

// The recorded run did call pthread_cond_wait in the consumer (and it returned).
// DUMP: T1 thread parent=T0 child=0
// DUMP: T1 wait not_empty
// DUMP: T1 end
//
// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 3 threads,
// payload[0..2] and sum are ordered by happens-before (signal → wait), full by its mutex.
// CHECK-NEXT:   shared objects: 5 (0 without a conflicting pair, 4 removed by happens-before, 1 by lockset, 0 left)
// CHECK-NOT:  candidate 1
// CHECK:      exit=0
//
// JSON:      "candidates": []
// JSON-NEXT: }
// JSON-NEXT: exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
