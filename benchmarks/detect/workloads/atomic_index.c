// Workload for benchmarks/detect: THREADS workers (argv[1]) share THREADS * ITERS items (argv[2])
// through an atomic index (`atomic_fetch_add`, sequentially consistent: an acquire and a release
// each, which the trace records until the location is hot); each item's value goes into a shared
// 1024-bucket histogram under one of two mutexes. No race: main reads the histogram after the
// joins. Its synchronization is mutexes, threads and atomics, and it touches a few thousand
// objects however long it runs, so `ilgen detect` clears it without building the model: its
// memory stays flat as the trace grows (the model would hold every sync event).
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define BUCKETS 1024

static atomic_long next;
static long items;
static pthread_mutex_t locks[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static long hist[BUCKETS];

static void *worker(void *arg) {
  (void)arg;
  for (long i; (i = atomic_fetch_add(&next, 1)) < items;) {
    long v = (i * 2654435761L) >> 7;
    int k = (int)(i & 1);
    pthread_mutex_lock(&locks[k]);
    hist[(v & (BUCKETS / 2 - 1)) * 2 + k]++;
    pthread_mutex_unlock(&locks[k]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  long iters = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 1 || threads > 64 || iters < 1)
    return 2;
  items = threads * iters;
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  long sum = 0;
  for (int b = 0; b < BUCKETS; b++)
    sum += hist[b];
  printf("%ld\n", sum);
  return sum == items ? 0 : 1;
}
