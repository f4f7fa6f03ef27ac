// SCENARIO: a benchmark's starting gate: three workers wait on a condition variable until main
//           broadcasts "go", then each claims a job slot and adds its result under the same lock:
//           race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// main builds the job table without any lock (the workers already exist but cannot leave the
// gate yet), then sets `open` under gate_lock and broadcasts gate_cv. Each worker waits with the
// predicate loop `while (!open) pthread_cond_wait(...)`, and while it still holds gate_lock after
// the wait it claims the next job slot (`next_slot++`). It then processes its job outside the
// lock, reading the job table and writing only its own results[] element, and finally adds its
// result to `total` and bumps `finished` in a second critical section on gate_lock.
//
// Several threads wake from one broadcast and update the same fields, next_slot, total and
// finished, one after another: all of those accesses are under gate_lock. The job table is read
// after each worker saw open == 1, which main set after filling it; a worker that arrived after
// the broadcast would see the flag already set, which gives the same order. results[] elements
// are distinct per claimed slot, and main reads them after the joins. Nothing here races, in
// any order of the wake-ups.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 3

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int open_gate;        // under gate_lock
static int next_slot;        // under gate_lock
static long total;           // under gate_lock
static int finished;         // under gate_lock

static int job_size[WORKERS]; // written by main before the broadcast, read-only afterwards
static long results[WORKERS]; // one element per claimed slot

static long run_job(int size) {
  long acc = 0;
  for (int i = 1; i <= size; i++)
    acc += (long)i * i % 97;
  return acc;
}

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&gate_lock);
  while (!open_gate)
    pthread_cond_wait(&gate_cv, &gate_lock);
  int slot = next_slot++; // each woken worker in turn, under the lock
  pthread_mutex_unlock(&gate_lock);

  long r = run_job(job_size[slot]);
  results[slot] = r;

  pthread_mutex_lock(&gate_lock);
  total += r;
  finished++;
  pthread_mutex_unlock(&gate_lock);
  return NULL;
}

int main(void) {
  pthread_t t[WORKERS];

  for (int i = 0; i < WORKERS; i++)
    if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  usleep(5000); // let every worker reach the gate, so that the broadcast wakes all three
  for (int i = 0; i < WORKERS; i++)
    job_size[i] = 200 + 100 * i;
  pthread_mutex_lock(&gate_lock);
  open_gate = 1;
  pthread_cond_broadcast(&gate_cv);
  pthread_mutex_unlock(&gate_lock);

  for (int i = 0; i < WORKERS; i++)
    pthread_join(t[i], NULL);
  long check = 0;
  for (int i = 0; i < WORKERS; i++)
    check += results[i];
  printf("%d finished, total %ld (%s)\n", finished, total, check == total ? "consistent" : "BAD");
  return 0;
}
