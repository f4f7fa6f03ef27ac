// The atomicity benchmark apps' command line and threads: `APP THREADS ITERS`. workers() reads
// THREADS (argv[1], 1..64, default 4) and ITERS (argv[2], default 1000, into `iters`); run()
// starts THREADS threads of `worker`, the i-th with argument i, and joins them all.
#ifndef WORKERS_H
#define WORKERS_H

#include <pthread.h>
#include <stdlib.h>

static long iters;

static int workers(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  iters = argc > 2 ? atol(argv[2]) : 1000;
  return threads >= 1 && threads <= 64 ? threads : 0;
}

static void run(int threads, void *(*worker)(void *)) {
  pthread_t t[64];
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
}

#endif
