// A job pipeline written like a parallel compressor: the reader (main) allocates jobs, fills them
// and queues them; a worker "compresses" each job in place; the writer checks them and frees
// them. The queues are bounded and under a mutex with condition variables; the job contents are
// written and read outside every lock, ordered only by the queue hand-offs. Jobs are larger than
// glibc's per-thread cache and there is one arena, so a job freed by the writer is what the
// reader's next malloc returns: the same addresses hold many jobs (checked in the dump, which
// has addresses freed by the writer (T2) and allocated again by the reader (T0)). Keyed by
// allocation epoch, no two jobs are paired: 0 candidates, in each of 20 recordings; likewise
// with -static. (Without epochs the same recordings give dozens of candidates.)
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | python3 %S/Inputs/reused.py T2 T0 | FileCheck --check-prefix=REUSED %s
// RUN: bash -c 'for i in $(seq 20); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: %ilgen cc -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | python3 %S/Inputs/reused.py T2 T0 | FileCheck --check-prefix=REUSED %s
// RUN: bash -c 'for i in $(seq 20); do rm -rf %t.sr && env ILGEN_OPTIONS=trace_dir=%t.sr %t.static && %ilgen detect --no-replay %t.sr | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { JOBS = 24, DEPTH = 2, SIZE = 40000 };

struct job {
  int seq;
  unsigned sum;
  unsigned char data[SIZE];
};

struct queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  struct job *items[DEPTH];
  int head, count, closed;
};

#define QUEUE_INIT                                                                                 \
  { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0 }

struct queue todo = QUEUE_INIT, done = QUEUE_INIT;
unsigned total;

void put(struct queue *q, struct job *j) {
  pthread_mutex_lock(&q->lock);
  while (q->count == DEPTH)
    pthread_cond_wait(&q->not_full, &q->lock);
  q->items[(q->head + q->count) % DEPTH] = j;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

void close_queue(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

struct job *get(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && !q->closed)
    pthread_cond_wait(&q->not_empty, &q->lock);
  struct job *j = NULL;
  if (q->count > 0) {
    j = q->items[q->head];
    q->head = (q->head + 1) % DEPTH;
    q->count--;
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->lock);
  return j;
}

void *worker(void *arg) {
  struct job *j;
  while ((j = get(&todo)) != NULL) {
    unsigned sum = 0;
    for (int i = 0; i < SIZE; i += 1000)
      sum += j->data[i] + 1u;
    j->sum = sum;
    put(&done, j);
  }
  return arg;
}

void *writer(void *arg) {
  for (int n = 0; n < JOBS; n++) {
    struct job *j = get(&done);
    total += j->sum + (unsigned)j->seq;
    free(j);
  }
  return arg;
}

int main(void) {
  mallopt(M_ARENA_MAX, 1);
  pthread_t w, out;
  pthread_create(&w, NULL, worker, NULL);
  pthread_create(&out, NULL, writer, NULL);
  for (int n = 0; n < JOBS; n++) {
    struct job *j = malloc(sizeof *j);
    j->seq = n;
    memset(j->data, n, SIZE);
    put(&todo, j);
  }
  close_queue(&todo);
  pthread_join(w, NULL);
  pthread_join(out, NULL);
  return total == 0;
}

// REUSED: reused {{[1-9][0-9]*}} address(es)

// CHECK:     20 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT: {{.}}
