// A bounded job queue under a mutex and two condition variables, as real pipelines hand jobs
// between stages: `put` blocks while it is full, `get` while it is empty and open, and gives NULL
// once it is closed and drained. Header-only, so the calls are instrumented in the test itself.
#ifndef JOB_QUEUE_H
#define JOB_QUEUE_H

#include <pthread.h>
#include <stddef.h>

enum { JOB_QUEUE_DEPTH = 2 };

struct job_queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  void *items[JOB_QUEUE_DEPTH];
  int head, count, closed;
};

#define JOB_QUEUE_INIT                                                                             \
  { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0 }

static void job_queue_put(struct job_queue *q, void *j) {
  pthread_mutex_lock(&q->lock);
  while (q->count == JOB_QUEUE_DEPTH)
    pthread_cond_wait(&q->not_full, &q->lock);
  q->items[(q->head + q->count) % JOB_QUEUE_DEPTH] = j;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

static void job_queue_close(struct job_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

static void *job_queue_get(struct job_queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && !q->closed)
    pthread_cond_wait(&q->not_empty, &q->lock);
  void *j = NULL;
  if (q->count > 0) {
    j = q->items[q->head];
    q->head = (q->head + 1) % JOB_QUEUE_DEPTH;
    q->count--;
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->lock);
  return j;
}

#endif
