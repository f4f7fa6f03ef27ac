// Atomicity benchmark: a work queue. THREADS workers (argv[1]) share a bounded queue (mutex and
// two condition variables); each produces ITERS jobs (argv[2]) and takes ITERS jobs. Marked
// transactions (ILGEN_ATOMIC):
//   - submit: puts one job and counts it in the statistics, one critical section each
//     (`queued` read and written in two critical sections: the lost update to predict);
//   - take: waits for a job and takes it, one critical section (serializable);
//   - finish: adds the job's cost to the worker's total under a lock of its own (serializable).
// The trace grows linearly with THREADS * ITERS; the distinct sites and locksets do not.
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "workers.h"

#define SLOTS 16

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int queue[SLOTS];
static int head, count;

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long queued, done_cost;

ILGEN_ATOMIC static void submit(int job) {
  pthread_mutex_lock(&qlock);
  while (count == SLOTS)
    pthread_cond_wait(&not_full, &qlock);
  queue[(head + count) % SLOTS] = job;
  count++;
  pthread_cond_signal(&not_empty);
  pthread_mutex_unlock(&qlock);
  pthread_mutex_lock(&stats_lock);
  long seen = queued; // read in one critical section ...
  pthread_mutex_unlock(&stats_lock);
  pthread_mutex_lock(&stats_lock);
  queued = seen + 1; // ... written back in another
  pthread_mutex_unlock(&stats_lock);
}

ILGEN_ATOMIC static int take(void) {
  pthread_mutex_lock(&qlock);
  while (count == 0)
    pthread_cond_wait(&not_empty, &qlock);
  int job = queue[head];
  head = (head + 1) % SLOTS;
  count--;
  pthread_cond_signal(&not_full);
  pthread_mutex_unlock(&qlock);
  return job;
}

ILGEN_ATOMIC static void finish(int job) {
  pthread_mutex_lock(&stats_lock);
  done_cost += job % 7;
  pthread_mutex_unlock(&stats_lock);
}

static void *worker(void *arg) {
  long id = (long)arg;
  for (long i = 0; i < iters; i++) {
    submit((int)(id * 31 + i));
    finish(take());
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = workers(argc, argv);
  if (!threads)
    return 2;
  run(threads, worker);
  printf("%ld %ld\n", queued, done_cost);
  return 0;
}
