// Issue 14's probe, `probe THREADS SECTIONS`: each of THREADS workers (2 in the issue) sweeps its
// own 16 MB int array 12 times (private memory the recorder sees and prepare drops), then runs
// SECTIONS lock/unlock sections (2.5 x 10^7 in the issue) that add to a shared sum and bump one of
// a shared 4096-entry histogram's buckets. Race-free: every shared access is under the one mutex.
// The trace grows with THREADS * SECTIONS (two sync events and up to three access records per
// section), so it stands for the long lock-heavy runs a user records for minutes.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { ARRAY_INTS = 16 * 1024 * 1024 / sizeof(int), SWEEPS = 12, BUCKETS = 4096 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long sum;
static long histogram[BUCKETS];
static long sections;

static void *worker(void *arg) {
  long id = (long)arg;
  int *own = malloc(ARRAY_INTS * sizeof(int));
  if (!own)
    return NULL;
  for (int s = 0; s < SWEEPS; s++)
    for (size_t i = 0; i < ARRAY_INTS; i++)
      own[i] = (int)(i * s + id);
  long local = 0;
  for (size_t i = 0; i < ARRAY_INTS; i += 4096)
    local += own[i];
  free(own);
  for (long i = 0; i < sections; i++) {
    pthread_mutex_lock(&lock);
    sum += i + local;
    histogram[(i * 2654435761u + id) % BUCKETS]++;
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  sections = argc > 2 ? atol(argv[2]) : 1000;
  pthread_t t[64];
  if (threads < 1 || threads > 64 || sections < 0)
    return 2;
  for (long i = 0; i < threads; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < threads; i++)
    pthread_join(t[i], NULL);
  long total = 0;
  for (int b = 0; b < BUCKETS; b++)
    total += histogram[b];
  printf("%ld %ld\n", sum, total);
  return 0;
}
