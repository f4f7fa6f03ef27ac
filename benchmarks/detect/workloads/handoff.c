// Workload for benchmarks/detect: THREADS threads (argv[1], even) in pairs; in each pair a
// producer hands ITERS items (argv[2]) to its consumer through a one-slot buffer (mutex + two
// condition variables), the payload written and read outside the mutex (race-free: ordered by
// signal → wait, or by the wait-loop markers when the predicate already held). All pairs also
// bump a shared statistics counter under a global mutex every 16th item, and every 64th item an
// unlocked shared `last_seen` (the race).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  pthread_mutex_t m;
  pthread_cond_t not_empty, not_full;
  int full;
  long payload;
  long sum;
} pair_t;

static pair_t pairs[32];
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static long stats;
static long last_seen;
static long iters;

static void *producer(void *arg) {
  pair_t *p = arg;
  for (long i = 0; i < iters; i++) {
    pthread_mutex_lock(&p->m);
    while (p->full)
      pthread_cond_wait(&p->not_full, &p->m);
    pthread_mutex_unlock(&p->m);
    p->payload = i;
    pthread_mutex_lock(&p->m);
    p->full = 1;
    pthread_cond_signal(&p->not_empty);
    pthread_mutex_unlock(&p->m);
    if ((i & 15) == 0) {
      pthread_mutex_lock(&stats_lock);
      stats++;
      pthread_mutex_unlock(&stats_lock);
    }
  }
  return NULL;
}

static void *consumer(void *arg) {
  pair_t *p = arg;
  for (long i = 0; i < iters; i++) {
    pthread_mutex_lock(&p->m);
    while (!p->full)
      pthread_cond_wait(&p->not_empty, &p->m);
    pthread_mutex_unlock(&p->m);
    p->sum += p->payload;
    pthread_mutex_lock(&p->m);
    p->full = 0;
    pthread_cond_signal(&p->not_full);
    pthread_mutex_unlock(&p->m);
    if ((i & 63) == 0)
      last_seen = i;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  iters = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 2 || threads > 64 || threads % 2)
    return 2;
  for (int i = 0; i < threads / 2; i++) {
    pthread_mutex_init(&pairs[i].m, NULL);
    pthread_cond_init(&pairs[i].not_empty, NULL);
    pthread_cond_init(&pairs[i].not_full, NULL);
    pthread_create(&t[2 * i], NULL, producer, &pairs[i]);
    pthread_create(&t[2 * i + 1], NULL, consumer, &pairs[i]);
  }
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  long total = 0;
  for (int i = 0; i < threads / 2; i++)
    total += pairs[i].sum;
  printf("%ld %ld %ld\n", total, stats, last_seen);
  return 0;
}
