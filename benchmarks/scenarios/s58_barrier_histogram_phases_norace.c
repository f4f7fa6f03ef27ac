// SCENARIO: a parallel histogram in three phases separated by pthread_barrier_wait: each thread
//           fills its own row, then merges one column range across every row, then one thread
//           totals the merged bins: every cross-thread read is behind a barrier, race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Four threads histogram a shared, read-only input. Phase 1: thread t counts its quarter of the
// input into partial[t][*], a row nobody else writes. Phase 2: thread t sums column range t of
// every row, reading the rows the other threads wrote in phase 1, into merged[bins of t]. Phase 3:
// the thread that pthread_barrier_wait designates (PTHREAD_BARRIER_SERIAL_THREAD) adds up all
// the merged bins and stores the total.
//
// A tool that only looks at locks sees plain cross-thread writes and reads of partial[][] and
// merged[] with no mutex anywhere. They are ordered: every thread's phase-1 writes come before
// its arrival at the first barrier, and every phase-2 read comes after the departure from it;
// likewise for merged[] and the second barrier. The total is read by main after the joins. Each
// thread also reads the input written by main before the forks.
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define BINS 16
#define INPUT 4096

static unsigned char input[INPUT];
static int partial[THREADS][BINS];
static int merged[BINS];
static long total;
static pthread_barrier_t phase;

static void *histogram(void *arg) {
  int t = (int)(long)arg;
  int chunk = INPUT / THREADS;

  // Phase 1: private row.
  for (int i = t * chunk; i < (t + 1) * chunk; i++)
    partial[t][input[i] % BINS]++;
  pthread_barrier_wait(&phase);

  // Phase 2: my column range, across all rows.
  int per = BINS / THREADS;
  for (int b = t * per; b < (t + 1) * per; b++) {
    int s = 0;
    for (int r = 0; r < THREADS; r++)
      s += partial[r][b];
    merged[b] = s;
  }
  int rc = pthread_barrier_wait(&phase);

  // Phase 3: one thread totals the merged bins.
  if (rc == PTHREAD_BARRIER_SERIAL_THREAD) {
    long sum = 0;
    for (int b = 0; b < BINS; b++)
      sum += merged[b];
    total = sum;
  }
  return NULL;
}

int main(void) {
  pthread_t th[THREADS];
  unsigned seed = 12345;

  for (int i = 0; i < INPUT; i++) {
    seed = seed * 1103515245u + 12345u;
    input[i] = (unsigned char)(seed >> 16);
  }
  pthread_barrier_init(&phase, NULL, THREADS);
  for (long t = 0; t < THREADS; t++)
    if (pthread_create(&th[t], NULL, histogram, (void *)t) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  pthread_barrier_destroy(&phase);

  printf("total %ld of %d;", total, INPUT);
  for (int b = 0; b < BINS; b += 4)
    printf(" bin %d = %d", b, merged[b]);
  printf("\n");
  return 0;
}
