// SCENARIO: a worker pool waits for a "start" broadcast with a bare pthread_cond_wait (no
//           predicate); if main broadcasts before a worker waits, the wake-up is lost for good
// CATEGORY: condvar
// EXPECT: deadlock 48 75
// REORDER: yes
//
// main creates two workers, lets them initialize, then broadcasts `start` under pool_lock so
// that they begin working together. A worker takes pool_lock after its initialization and waits
// on `start` with no condition to re-check: the author relied on the workers being faster than
// main's set-up. A condition variable has no memory, so when main's broadcast comes before a
// worker's wait (the worker's initialization was slow), that worker never wakes up: it stays
// blocked in its wait and main stays blocked in its join of it.
//
// In the natural run main sleeps before broadcasting, so both workers are already waiting and
// the run finishes. ilgen must predict the order where the broadcast's critical section comes
// before a worker's, and confirm it by replay. The fix is a `started` flag set under the lock
// and a `while (!started)` loop around the wait. The work counters are per worker, read after
// the joins; `jobs_done` is updated under pool_lock, so there is no data race.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define WORKERS 2

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t start = PTHREAD_COND_INITIALIZER;
static int jobs_done;

struct worker {
  pthread_t tid;
  int id;
  long table[16];
  long result;
};

static void init_table(struct worker *w) {
  for (int i = 0; i < 16; i++)
    w->table[i] = (long)(w->id + 1) * i;
}

static void *worker_main(void *arg) {
  struct worker *w = arg;
  init_table(w);

  pthread_mutex_lock(&pool_lock);
  // BUG: no predicate. A broadcast sent before this point is lost and the wait never
  // returns (the fix: while (!started) pthread_cond_wait(...)).
  pthread_cond_wait(&start, &pool_lock);
  pthread_mutex_unlock(&pool_lock);

  long sum = 0;
  for (int i = 0; i < 16; i++)
    sum += w->table[i];
  w->result = sum;

  pthread_mutex_lock(&pool_lock);
  jobs_done++;
  pthread_mutex_unlock(&pool_lock);
  return NULL;
}

int main(void) {
  struct worker pool[WORKERS];

  for (int i = 0; i < WORKERS; i++) {
    pool[i].id = i;
    pthread_create(&pool[i].tid, NULL, worker_main, &pool[i]);
  }
  usleep(20000); // "set up the rest of the service": the workers are waiting by now
  pthread_mutex_lock(&pool_lock);
  pthread_cond_broadcast(&start);
  pthread_mutex_unlock(&pool_lock);

  for (int i = 0; i < WORKERS; i++)
    pthread_join(pool[i].tid, NULL);
  printf("%d jobs done: %ld %ld\n", jobs_done, pool[0].result, pool[1].result);
  return 0;
}
