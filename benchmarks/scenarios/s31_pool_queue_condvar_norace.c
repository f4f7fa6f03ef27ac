// SCENARIO: a fixed pool of three workers on a malloc'd work queue under a mutex and two
//           condition variables; tasks are heap objects whose fields cross threads through it
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// A textbook thread pool. The pool struct and every task are allocated on the heap by main and
// handed to the workers only through the queue: main fills a task, then appends it under
// pool->lock and signals has_work; a worker waits in the loop "while the queue is empty and no
// shutdown, wait", takes the head under the lock, and works on the task outside the lock (it owns
// the task now), writing the task's result field without any lock. It then counts the task as
// done under the lock and signals all_done when the last one is in. main waits in its own loop
// for completed == submitted before reading any result: every task field is ordered by the
// queue's critical sections and the condition-variable hand-offs, and every pool field is only
// touched under the lock. Shutdown sets the flag under the lock and broadcasts; the workers are
// joined before the tasks and the pool are freed, so no freed block is reused while they run.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WORKERS 3
#define TASKS 9

struct task {
  unsigned input;
  unsigned result; // written by the worker that took the task, outside the lock
  struct task *next;
};

struct pool {
  pthread_mutex_t lock;
  pthread_cond_t has_work, all_done;
  struct task *head, *tail;
  int submitted, completed, shutdown;
};

static unsigned crunch(unsigned x) {
  for (int i = 0; i < 1000; i++)
    x = x * 1103515245u + 12345u;
  return x >> 8;
}

static void *pool_worker(void *arg) {
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->lock);
    while (!p->head && !p->shutdown)
      pthread_cond_wait(&p->has_work, &p->lock);
    struct task *t = p->head;
    if (!t) { // shut down and drained
      pthread_mutex_unlock(&p->lock);
      return NULL;
    }
    p->head = t->next;
    if (!p->head)
      p->tail = NULL;
    pthread_mutex_unlock(&p->lock);

    t->result = crunch(t->input); // this worker owns the task now
    usleep(500);                  // I/O part of the task

    pthread_mutex_lock(&p->lock);
    if (++p->completed == p->submitted)
      pthread_cond_signal(&p->all_done);
    pthread_mutex_unlock(&p->lock);
  }
}

static void pool_submit(struct pool *p, struct task *t) {
  t->next = NULL;
  pthread_mutex_lock(&p->lock);
  if (p->tail)
    p->tail->next = t;
  else
    p->head = t;
  p->tail = t;
  p->submitted++;
  pthread_cond_signal(&p->has_work);
  pthread_mutex_unlock(&p->lock);
}

int main(void) {
  pthread_t th[WORKERS];
  struct task *tasks[TASKS];
  struct pool *p = calloc(1, sizeof *p);
  if (!p)
    return 1;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->has_work, NULL);
  pthread_cond_init(&p->all_done, NULL);
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&th[i], NULL, pool_worker, p);

  for (int i = 0; i < TASKS; i++) {
    if (!(tasks[i] = malloc(sizeof *tasks[i])))
      return 1;
    tasks[i]->input = 1000u + (unsigned)i;
    tasks[i]->result = 0;
    pool_submit(p, tasks[i]);
  }
  pthread_mutex_lock(&p->lock);
  while (p->completed < p->submitted)
    pthread_cond_wait(&p->all_done, &p->lock);
  pthread_mutex_unlock(&p->lock);

  unsigned ok = 0;
  for (int i = 0; i < TASKS; i++)
    ok += tasks[i]->result == crunch(tasks[i]->input);

  pthread_mutex_lock(&p->lock);
  p->shutdown = 1;
  pthread_cond_broadcast(&p->has_work);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(th[i], NULL);
  printf("%u of %d task results correct\n", ok, TASKS);
  for (int i = 0; i < TASKS; i++)
    free(tasks[i]);
  pthread_mutex_destroy(&p->lock);
  pthread_cond_destroy(&p->has_work);
  pthread_cond_destroy(&p->all_done);
  free(p);
  return 0;
}
