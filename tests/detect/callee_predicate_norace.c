// A polling loop whose predicate is read in a function of another file: the worker writes `data`
// outside the lock, then publishes it by setting `finished` under the lock; main reads `data` only
// once `queue_ready` (Inputs/queue_ready.c) has returned true. The pass flags the load that
// queue_ready returns as deciding, so detect keeps the worker's publishing critical section before
// main's last one: no candidate. Without that edge (--no-reads-from) the model lets main's last
// critical section run before the worker's and predicts a race on `data` no replay can follow.
// The test barrier (no sync event) makes main see "not yet" once, as a waiter usually does.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s %S/Inputs/queue_ready.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=KEPT
// RUN: sh -c '%ilgen detect --no-replay --no-reads-from %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=FREE
//
// At -O2 as well, where the call stays a call (the callee is in another file).
// RUN: %ilgen cc -g -O2 -I %testinc %s %S/Inputs/queue_ready.c -o %t.o2
// RUN: rm -rf %t.o2.trace && env ILGEN_OPTIONS=trace_dir=%t.o2.trace %t.o2
// RUN: sh -c '%ilgen detect --no-replay %t.o2.trace; echo "exit=$?"' | FileCheck %s --check-prefix=KEPT
#include <pthread.h>
#include <unistd.h>

#include "Inputs/queue_ready.h"
#include "ilgen_test.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct queue q;
static ilgen_test_barrier_t polled_once;

static void *worker(void *arg) {
  __ilgen_testonly_barrier_wait(&polled_once);
  q.data = 42;
  pthread_mutex_lock(&m);
  q.finished = 1;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&polled_once, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  int v = -1;
  for (int round = 0;; round++) {
    pthread_mutex_lock(&m);
    if (queue_ready(&q)) {
      v = q.data;
      pthread_mutex_unlock(&m);
      break;
    }
    pthread_mutex_unlock(&m);
    if (round == 0)
      __ilgen_testonly_barrier_wait(&polled_once);
    usleep(1000);
  }
  pthread_join(t, NULL);
  return v == 42 ? 0 : 1;
}

// KEPT:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// KEPT:      exit=0

// FREE:      ilgen: 1 candidate(s)
// FREE:      exit=66
