// A release orders only what its thread did before it, an acquire only what its thread does after
// it. Main writes `early`, `data`, releases the flag, then writes `late`; the reader reads `early`
// before its acquire loop and `data` and `late` after it. Only the data pair is ordered (its write
// before the release that the acquire read from, its read after that acquire): the early and the
// late pair stay race pairs although each shares its segment with an ordered access, and both are
// predicted and confirmed with their exact pairs.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=PREDICT %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>

#include "ilgen_test.h"

static int early, data, late;
static atomic_int ready;
static ilgen_test_barrier_t read_early;

static void *reader(void *arg) {
  int sum = early;
  __ilgen_testonly_barrier_wait(&read_early);
  while (!atomic_load_explicit(&ready, memory_order_acquire))
    ;
  sum += data;
  sum += late;
  return (void *)(long)sum;
}

int main(void) {
  __ilgen_testonly_barrier_init(&read_early, 2);
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  __ilgen_testonly_barrier_wait(&read_early);
  early = 1;
  data = 42;
  atomic_store_explicit(&ready, 1, memory_order_release);
  late = 1;
  pthread_join(t, NULL);
  return 0;
}

// PREDICT:      ilgen: 2 candidate(s): 2 race(s), 0 deadlock(s)
// PREDICT:      race pairs: 3 (1 removed by happens-before, 0 by lockset, 2 left)
// PREDICT:      candidate 1: data race on early
// PREDICT-NEXT:   write by thread 0 at {{.*}}atomic_release_acquire_stretch_race.c:36 in main
// PREDICT-NEXT:   read by thread 1 at {{.*}}atomic_release_acquire_stretch_race.c:22 in reader
// PREDICT:      candidate 2: data race on late
// PREDICT-NEXT:   write by thread 0 at {{.*}}atomic_release_acquire_stretch_race.c:39 in main
// PREDICT-NEXT:   read by thread 1 at {{.*}}atomic_release_acquire_stretch_race.c:27 in reader

// CHECK-DAG:  SUMMARY: ilgen: data race {{.*}}atomic_release_acquire_stretch_race.c:{{22|36}}
// CHECK-DAG:  SUMMARY: ilgen: data race {{.*}}atomic_release_acquire_stretch_race.c:{{27|39}}
// CHECK:      ilgen: 2 candidate(s) replayed: 2 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      ilgen: 2 finding(s) confirmed
// CHECK:      exit=66
