// SCENARIO: a thread-pool manager retires a worker by joining it while holding the pool lock; the
//           worker posts its final statistics under the same lock before it exits: join deadlock
// CATEGORY: deadlock
// EXPECT: deadlock 58 84 96
// REORDER: yes
//
// main starts a pool manager thread and waits for it. The manager starts a worker for a batch of
// jobs, does its own balancing work, and then retires the worker: it takes pool_lock, removes the
// worker from the pool and joins it, still holding pool_lock so that no other thread sees the pool
// half-updated. The worker, at the end of its batch, adds its results to the pool's totals under
// pool_lock. When the manager retires the worker before the worker has posted its totals, the
// manager waits in pthread_join for the worker, the worker waits in pthread_mutex_lock for the
// lock the manager holds, and main waits in its pthread_join for the manager: a deadlock of three
// threads, two of them in joins.
//
// In the natural run the batch is short and the manager balances for 40 ms first, so the worker
// has posted its totals and ended before the manager takes the lock, and the join returns at
// once. Reordering the recorded operations (the manager's lock before the worker's) exposes it.
//
// Data: the pool fields are accessed under pool_lock only; the batch is filled by the manager
// before it creates the worker and read by the worker; main prints after joining the manager.
// There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define BATCH 16

struct pool {
  pthread_mutex_t lock;
  int workers;     // under lock
  long jobs_done;  // under lock
  long checksum;   // under lock
};

static struct pool pool = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};

struct batch {
  int jobs[BATCH];
  int n;
};

static long run_job(int job) {
  long h = job;
  for (int i = 0; i < 100; i++)
    h = (h * 1103515245 + 12345) & 0x7fffffff;
  return h;
}

static void *worker(void *arg) {
  struct batch *b = arg;
  long sum = 0;
  int done = 0;
  for (int i = 0; i < b->n; i++) {
    sum += run_job(b->jobs[i]) & 0xff;
    done++;
  }
  pthread_mutex_lock(&pool.lock); // the worker blocks here: the manager holds the lock
  pool.jobs_done += done;
  pool.checksum += sum;
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

static void *manager(void *arg) {
  (void)arg;
  static struct batch b;
  pthread_t w;

  for (int i = 0; i < BATCH; i++)
    b.jobs[i] = 3 * i + 1;
  b.n = BATCH;
  pthread_mutex_lock(&pool.lock);
  pool.workers++;
  pthread_mutex_unlock(&pool.lock);
  pthread_create(&w, NULL, worker, &b);

  usleep(40000); // load balancing; the batch is finished by now in the natural run

  // Retire the worker. The bug: it is joined with pool.lock held, and the worker needs the lock
  // to post its totals before it can end.
  pthread_mutex_lock(&pool.lock);
  pool.workers--;
  pthread_join(w, NULL); // the manager blocks here, holding pool.lock
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

int main(void) {
  pthread_t mgr;

  if (pthread_create(&mgr, NULL, manager, NULL) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(mgr, NULL); // main blocks here while the manager and the worker deadlock

  printf("workers %d, jobs done %ld, checksum %ld\n", pool.workers, pool.jobs_done,
         pool.checksum);
  return 0;
}
