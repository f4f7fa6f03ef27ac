// SCENARIO: two workers hash 10000 records each, adding every hash to a shared histogram under a
//           mutex (10000 critical sections each) and bumping a progress counter without it
// CATEGORY: loop
// EXPECT: race 42 42
// REORDER: no
//
// A long loop with one racy pair of source lines among tens of thousands of sync operations. Each
// iteration of each worker hashes a record, takes hist_lock, bumps one bucket of the shared
// histogram, releases the lock, and then increments `records_done`, a progress counter for the
// status line, without any lock ("it is only a progress display"). The histogram is race-free.
// The progress counter is not: each increment is followed by the worker's next critical section,
// which orders it before the other worker's later iterations, but the increment after a worker's
// last unlock is followed by no release at all, and the other worker's increments after its own
// last lock are not ordered with it either: in every run both workers' final increments are
// concurrent, so no reordering is needed. What makes the scenario hard is the size of the trace
// (40000 lock and unlock operations, 20000 segments per worker, each touching records_done) and
// finding the one conflicting pair in it. main prints the histogram after joining both workers;
// the progress count may have lost updates, so it only goes to stderr.
#include <pthread.h>
#include <stdio.h>

#define RECORDS 10000
#define BUCKETS 16

static long hist[BUCKETS];
static long records_done; // progress for the status line: updated without the lock
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash_record(unsigned key) {
  unsigned h = key * 2654435761u;
  h ^= h >> 15;
  return h * 2246822519u;
}

static void *worker(void *arg) {
  unsigned base = *(const unsigned *)arg;
  for (unsigned i = 0; i < RECORDS; i++) {
    unsigned h = hash_record(base + i);
    pthread_mutex_lock(&hist_lock);
    hist[h % BUCKETS]++;
    pthread_mutex_unlock(&hist_lock);
    records_done++; // the racy progress update
  }
  return NULL;
}

int main(void) {
  pthread_t t[2];
  unsigned bases[2] = {0, RECORDS};

  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, &bases[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);

  long total = 0, max = 0;
  for (int b = 0; b < BUCKETS; b++) {
    total += hist[b];
    if (hist[b] > max)
      max = hist[b];
  }
  printf("hashed %ld records into %d buckets, fullest bucket %ld\n", total, BUCKETS, max);
  fprintf(stderr, "progress counter: %ld of %d\n", records_done, 2 * RECORDS);
  return 0;
}
