// Workload for benchmarks/detect: THREADS workers (argv[1]) run ITERS rounds (argv[2]) of two
// barrier-separated phases: each writes its own slot, all meet at a pthread_barrier, each reads
// its two neighbours' slots into its own result, all meet again. Race-free through the barriers
// alone (no mutex), except that every 32nd round each worker also adds to an unlocked shared
// `rounds` counter in the second phase (the race). Two barrier waits (each an enter and an exit
// in the model) per round and thread.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t phase;
static long slot[64];
static long result[64];
static long rounds;
static int threads;
static long iters;

static void *worker(void *arg) {
  long id = (long)arg;
  for (long r = 0; r < iters; r++) {
    slot[id] = r + id;
    pthread_barrier_wait(&phase);
    result[id] += slot[(id + 1) % threads] + slot[(id + threads - 1) % threads];
    if ((r & 31) == 0)
      rounds++;
    pthread_barrier_wait(&phase);
  }
  return NULL;
}

int main(int argc, char **argv) {
  threads = argc > 1 ? atoi(argv[1]) : 4;
  iters = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 2 || threads > 64)
    return 2;
  pthread_barrier_init(&phase, NULL, (unsigned)threads);
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  long total = 0;
  for (int i = 0; i < threads; i++)
    total += result[i];
  printf("%ld %ld\n", total, rounds);
  return 0;
}
