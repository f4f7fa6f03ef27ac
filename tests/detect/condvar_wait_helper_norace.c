// condvar_predicate_holds_norace.c with the wait in a helper, as xz waits through
// mythread_cond_timedwait: the consumer's loops call `cond_wait`, a static function that calls
// pthread_cond_wait on the first field of the struct it takes as parameter. The pass must mark
// those loops as wait loops on the argument the loop passes (`&q.not_empty`), or the payload,
// written and read outside the mutex, looks racy: no wait is ever called, the test barrier
// holding the consumer back until every slot is filled.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
//
// At -O2 the helper is inlined after the markers are placed, around its call.
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t.O2
// RUN: rm -rf %t.O2.trace && env ILGEN_OPTIONS=trace_dir=%t.O2.trace %t.O2
// RUN: %ilgen dump %t.O2.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.O2.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

#include "ilgen_test.h"

enum { ITEMS = 3 };

struct my_cond {
  pthread_cond_t cond;
  int clock;
};

struct queue {
  pthread_mutex_t m;
  struct my_cond not_empty;
  int count;  // under m
};

struct queue q = {PTHREAD_MUTEX_INITIALIZER, {PTHREAD_COND_INITIALIZER, 0}, 0};
int payload[ITEMS];  // NOT under q.m
int sum;
ilgen_test_barrier_t all_produced;

static int cond_wait(struct my_cond *cond, pthread_mutex_t *mutex) {
  return pthread_cond_wait(&cond->cond, mutex);
}

void *producer(void *arg) {
  for (int i = 0; i < ITEMS; i++) {
    payload[i] = 10 * (i + 1);
    pthread_mutex_lock(&q.m);
    q.count++;
    pthread_cond_signal(&q.not_empty.cond);
    pthread_mutex_unlock(&q.m);
  }
  __ilgen_testonly_barrier_wait(&all_produced);
  return arg;
}

void *consumer(void *arg) {
  __ilgen_testonly_barrier_wait(&all_produced);
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&q.m);
    while (q.count == 0)
      cond_wait(&q.not_empty, &q.m);
    q.count--;
    pthread_mutex_unlock(&q.m);
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
// DUMP-NOT: T1 {{wait|wake}} q
// DUMP:     T1 waitloop_enter q+40
// DUMP-NOT: T1 {{wait|wake}} q
// DUMP:     T1 waitloop_exit q+40
// DUMP-NOT: T1 {{wait|wake}} q
// DUMP:     T1 waitloop_exit q+40
// DUMP-NOT: T1 {{wait|wake}} q
// DUMP:     T1 waitloop_exit q+40
// DUMP-NOT: T1 {{wait|wake}} q
// DUMP:     T1 end
//
// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT:  candidate 1
// CHECK:      exit=0
