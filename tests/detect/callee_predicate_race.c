// callee_predicate_norace.c with a real race behind the published flag: after publishing, the
// worker writes `late` outside the lock, and main reads it once queue_ready (Inputs/queue_ready.c)
// has returned true. Keeping the publishing critical section before main's last one must not hide
// this race: detect predicts it and its replay confirms it, and `data` stays race-free.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s %S/Inputs/queue_ready.c -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
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
  q.late = 7;
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
  int late = q.late;
  pthread_join(t, NULL);
  return v == 42 && late >= 0 ? 0 : 1;
}

// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:  #0 main {{.*}}callee_predicate_race.c:46
// CHECK-DAG:  #0 worker {{.*}}callee_predicate_race.c:25
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66
