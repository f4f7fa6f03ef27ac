// A program that starts its workers afresh for every job (htslib's thrash_threads tests, a thread
// per request): 250 rounds of 8 threads, each round's workers joined before the next round's are
// forked, 2,001 threads in all. Every worker waits for main's go (a condition variable, so the
// deadlock search runs), adds its share to `total` under the lock and bumps `progress` without
// it: one race, at one pair of lines, in every round.
//
// The analysis holds no clock component and no search state per thread that ever lived: a
// thread forked after a join takes the joined thread's clock slot, and the exhaustive search
// moves only a window's threads (each round of 8 is what it reaches): 74 MB resident. Before, the
// search's 200,000 states had a word per thread each (1.6 GB at this size), and without the
// slots the clocks alone took 213 MB: out of memory under this cap (htslib's thrash_threads2,
// 9,001 threads: 9 GB).
//
// RUN: %ilgen cc -g -O1 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// OUT: total 7000
// RUN: sh -c 'ulimit -v 131072 && %ilgen detect --no-replay %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CAPPED --implicit-check-not="out of memory"
// CAPPED:      ilgen: {{[0-9]+}} candidate(s): 1 race(s), 0 deadlock(s)
// CAPPED-NEXT: trace: 2001 threads, {{[0-9]+}} sync events,
// CAPPED:      exit=66
//
// The replay proves it: one worker's `progress++` against another's, one finding.
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// CHECK:      WARNING: ilgen: data race
// CHECK-NEXT:   {{Read|Write}} of size 4 at 0x{{[0-9a-f]+}} by thread T{{[0-9]+}}:
// CHECK-NEXT:     #0 work {{.*}}thread_rounds_race.c:54:11
// CHECK:        Previous write of size 4 at 0x{{[0-9a-f]+}} by thread T{{[0-9]+}}:
// CHECK-NEXT:     #0 work {{.*}}thread_rounds_race.c:54:11
// CHECK:        Location is global 'progress' of size 4
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK:      exit=66
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 250
#define WORKERS 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static int round_open = -1;
static long total;
static int progress;

static void *work(void *arg) {
  long share = (long)arg % WORKERS;
  int round = (int)((long)arg / WORKERS);
  pthread_mutex_lock(&lock);
  while (round_open != round)
    pthread_cond_wait(&go, &lock);
  total += share;
  pthread_mutex_unlock(&lock);
  progress++;
  return NULL;
}

int main(void) {
  for (int r = 0; r < ROUNDS; r++) {
    pthread_t t[WORKERS];
    for (long i = 0; i < WORKERS; i++)
      pthread_create(&t[i], NULL, work, (void *)(r * WORKERS + i));
    pthread_mutex_lock(&lock);
    round_open = r;
    pthread_cond_broadcast(&go);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < WORKERS; i++)
      pthread_join(t[i], NULL);
  }
  printf("total %ld\n", total);
  return 0;
}
