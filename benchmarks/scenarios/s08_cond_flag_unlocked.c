// SCENARIO: a "job finished" flag waited for with a proper predicate loop, but set by the worker
//           outside the mutex before it signals: the flag's write races with the waiter's check
// CATEGORY: condvar
// EXPECT: race 42 59
// REORDER: yes
//
// main hands a job to a worker and waits for it with the textbook loop
// `while (!job_done) pthread_cond_wait(&done_cv, &done_lock)`. The worker stores `job_done = 1`
// first and only then takes done_lock to signal, on the theory that "the signal is under the
// lock, that is what matters". It is not: the flag is the shared state the mutex is meant to
// protect. main's first check of `job_done` (made under the lock, before it waits) and the
// worker's unlocked store are ordered only if main's critical section happens to come before the
// worker's first one (the signal's lock comes after the store and orders nothing). A missed
// wake-up cannot happen here (main holds the lock from its check to its wait and the signal
// needs the lock), but the flag itself is raced on.
//
// In the natural run the worker computes for a while (a short sleep), so main checks the flag
// first and waits; the wait releases done_lock and the worker's first critical section (storing
// the result) acquires it, so main's check happens before the worker's later store and a
// happens-before detector sees nothing. When the worker's first critical section comes before
// main's, main's check and the unlocked store are unordered: the race must be predicted by
// reordering the critical sections. The result and the re-check after the wake-up are ordered.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static int job_done;
static long job_result;

static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static void *worker(void *arg) {
  int n = (int)(long)arg;
  usleep(10000); // "load the input": main is waiting by now
  long r = fib(n);
  pthread_mutex_lock(&done_lock);
  job_result = r; // under the lock, ordered before main's read
  pthread_mutex_unlock(&done_lock);

  job_done = 1; // RACE: the predicate is written without done_lock
  pthread_mutex_lock(&done_lock);
  pthread_cond_signal(&done_cv);
  pthread_mutex_unlock(&done_lock);
  return NULL;
}

int main(void) {
  pthread_t w;
  pthread_create(&w, NULL, worker, (void *)20L);

  // Independent work of main while the job runs: local only.
  long squares = 0;
  for (int i = 0; i < 100; i++)
    squares += (long)i * i;

  pthread_mutex_lock(&done_lock);
  while (!job_done) // RACE: the check, under done_lock, which the writer does not hold
    pthread_cond_wait(&done_cv, &done_lock);
  long r = job_result;
  pthread_mutex_unlock(&done_lock);

  pthread_join(w, NULL);
  printf("fib = %ld, squares = %ld\n", r, squares);
  return 0;
}
