// The job pipeline of heap_pipeline_norace.c with the recycling real compressors do (pigz's
// pools): jobs are not freed but returned to a free list under the pool's lock, and the reader
// takes a returned job (polling for one once POOL jobs exist) and fills it again. The same job
// object carries 24 jobs' data; what orders one use after the previous is the free list's
// hand-off: a pop that reads the list head the writer's push wrote. Without data values a model
// could put the pop before that push and pair the old job's reads with the new job's writes;
// the head read decides an address, so detect keeps its writer before it: 0 candidates in each
// of 20 recordings (and with -static), while --no-reads-from predicts the infeasible pairs.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck --check-prefix=RECYCLED %s
// RUN: bash -c 'for i in $(seq 20); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t >/dev/null && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: sh -c '%ilgen detect --no-replay --no-reads-from %t.trace; echo "exit=$?"' | FileCheck --check-prefix=FREE %s
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: bash -c 'for i in $(seq 20); do rm -rf %t.sr && env ILGEN_OPTIONS=trace_dir=%t.sr %t.static >/dev/null && %ilgen detect --no-replay %t.sr | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_queue.h"

enum { JOBS = 24, POOL = 4, SIZE = 4000 };

struct job {
  struct job *next;
  int seq;
  unsigned sum;
  unsigned char data[SIZE];
};

struct job_queue todo = JOB_QUEUE_INIT, done = JOB_QUEUE_INIT;
unsigned total;

// The recycling pool: at most POOL jobs are ever allocated; a finished job goes back on the free
// list, and the reader polls for one when the pool is exhausted (a condition wait would order
// the pop after the push through the signal whenever the reader happened to wait, and the FREE
// check below would depend on the recording's timing).
struct {
  pthread_mutex_t lock;
  struct job *free;
  int allocated, recycled;
} pool = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

struct job *take_job(void) {
  pthread_mutex_lock(&pool.lock);
  while (pool.free == NULL && pool.allocated == POOL) {
    pthread_mutex_unlock(&pool.lock);
    usleep(1000);
    pthread_mutex_lock(&pool.lock);
  }
  struct job *j = pool.free;
  if (j != NULL) {
    pool.free = j->next;
    pool.recycled++;
  } else {
    pool.allocated++;
  }
  pthread_mutex_unlock(&pool.lock);
  return j != NULL ? j : malloc(sizeof *j);
}

void return_job(struct job *j) {
  pthread_mutex_lock(&pool.lock);
  j->next = pool.free;
  pool.free = j;
  pthread_mutex_unlock(&pool.lock);
}

void *worker(void *arg) {
  struct job *j;
  while ((j = job_queue_get(&todo)) != NULL) {
    unsigned sum = 0;
    for (int i = 0; i < SIZE; i += 100)
      sum += j->data[i] + 1u;
    j->sum = sum;
    job_queue_put(&done, j);
  }
  return arg;
}

void *writer(void *arg) {
  for (int n = 0; n < JOBS; n++) {
    struct job *j = job_queue_get(&done);
    total += j->sum + (unsigned)j->seq;
    return_job(j);
  }
  return arg;
}

int main(void) {
  pthread_t w, out;
  pthread_create(&w, NULL, worker, NULL);
  pthread_create(&out, NULL, writer, NULL);
  for (int n = 0; n < JOBS; n++) {
    struct job *j = take_job();
    j->seq = n;
    memset(j->data, n, SIZE);
    job_queue_put(&todo, j);
  }
  job_queue_close(&todo);
  pthread_join(w, NULL);
  pthread_join(out, NULL);
  printf("recycled %d of %d jobs\n", pool.recycled, JOBS);
  while (pool.free != NULL) {
    struct job *j = pool.free;
    pool.free = j->next;
    free(j);
  }
  return total == 0;
}

// RECYCLED: recycled 20 of 24 jobs

// CHECK:     20 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT: {{.}}

// FREE: ilgen: {{[1-9][0-9]*}} candidate(s)
// FREE: exit=66
