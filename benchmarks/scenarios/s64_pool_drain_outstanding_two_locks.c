// SCENARIO: a heap-allocated thread pool's drain waits in a predicate loop on the pool's
//           `outstanding` count under the state lock, while the workers decrement it under the
//           queue lock; the drain really waits, and its predicate reads race with the decrements
// CATEGORY: pool
// EXPECT: race 64 89
// REORDER: no
//
// The pool (malloc'd, as real pools are) has two locks: queue_lock guards the job ring and the
// `outstanding` count of jobs not yet finished, state_lock pairs with the `idle` condition
// variable. A worker takes a job, runs it, decrements `outstanding` under queue_lock and then
// signals `idle` under state_lock. pool_drain waits with the textbook loop
// `while (p->outstanding > 0) pthread_cond_wait(&p->idle, &p->state_lock)`, but reads the count
// under state_lock, which no decrement holds: each read of the predicate races with the
// decrements of the jobs still running.
//
// The jobs take a while (usleep), so main's drain finds work outstanding and really waits,
// waking at each job's signal. Its first predicate read comes before any decrement and nothing
// orders them (the workers never acquire anything main releases after its read), so the
// recorded run shows the race; ilgen must replay a schedule in which every other read of the
// wait loop still sees what it saw (the count it waited on, the job it took) for the
// replay to reach the racing pair.
//
// Data: the jobs' inputs are written by main before the workers are created, each result by the
// worker that ran the job and read by main after the joins; the ring and its head are only
// touched under queue_lock.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define WORKERS 2
#define JOBS 4

struct pool {
  pthread_mutex_t queue_lock; // guards next_job and outstanding
  pthread_mutex_t state_lock; // pairs with idle
  pthread_cond_t idle;
  int next_job;
  int outstanding; // decremented under queue_lock, read by pool_drain under state_lock
  int input[JOBS];
  long result[JOBS];
  pthread_t threads[WORKERS];
};

static long run_job(int x) {
  usleep(20000); // the job's I/O
  long acc = 0;
  for (int i = 0; i < 1000; i++)
    acc += (x * i) % 11;
  return acc;
}

static void *worker(void *arg) {
  struct pool *p = arg;
  for (;;) {
    pthread_mutex_lock(&p->queue_lock);
    int job = p->next_job < JOBS ? p->next_job++ : -1;
    pthread_mutex_unlock(&p->queue_lock);
    if (job < 0)
      return NULL;
    p->result[job] = run_job(p->input[job]);

    pthread_mutex_lock(&p->queue_lock);
    p->outstanding--; // RACE: written under queue_lock
    pthread_mutex_unlock(&p->queue_lock);
    pthread_mutex_lock(&p->state_lock);
    pthread_cond_signal(&p->idle);
    pthread_mutex_unlock(&p->state_lock);
  }
}

static struct pool *pool_start(void) {
  struct pool *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  pthread_mutex_init(&p->queue_lock, NULL);
  pthread_mutex_init(&p->state_lock, NULL);
  pthread_cond_init(&p->idle, NULL);
  for (int j = 0; j < JOBS; j++)
    p->input[j] = 3 * j + 1;
  p->outstanding = JOBS;
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&p->threads[i], NULL, worker, p);
  return p;
}

static void pool_drain(struct pool *p) {
  pthread_mutex_lock(&p->state_lock);
  while (p->outstanding > 0) // RACE: read under state_lock, not queue_lock
    pthread_cond_wait(&p->idle, &p->state_lock);
  pthread_mutex_unlock(&p->state_lock);
}

int main(void) {
  struct pool *p = pool_start();
  if (!p)
    return 1;
  pool_drain(p);
  for (int i = 0; i < WORKERS; i++)
    pthread_join(p->threads[i], NULL);
  long total = 0;
  for (int j = 0; j < JOBS; j++)
    total += p->result[j];
  printf("%d jobs, total %ld\n", JOBS, total);
  free(p);
  return 0;
}
