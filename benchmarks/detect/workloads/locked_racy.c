// Workload for benchmarks/detect: THREADS workers (argv[1]) each run ITERS iterations (argv[2]):
// a locked update of a shared total under one of two mutexes, an update of the worker's own slot
// of a global array (recorded, but no other thread touches it: prepare drops it), and every 8th
// iteration an unlocked increment of a shared counter (the race detect must report). Two sync
// events per iteration per thread, so the trace grows linearly with THREADS * ITERS.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t locks[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static long totals[2];
static long racy;
static long own[64];
static long iters;

static void *worker(void *arg) {
  long id = (long)arg;
  for (long i = 0; i < iters; i++) {
    int k = (int)((id + i) & 1);
    pthread_mutex_lock(&locks[k]);
    totals[k] += i;
    pthread_mutex_unlock(&locks[k]);
    own[id] += k;
    if ((i & 7) == 0)
      racy++;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  iters = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 1 || threads > 64)
    return 2;
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  printf("%ld %ld %ld\n", totals[0], totals[1], racy);
  return 0;
}
