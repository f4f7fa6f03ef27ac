// atomic_message_passing_norace.cpp with relaxed orderings on both sides: a relaxed store and
// load order nothing (C11: no synchronizes-with), so the data pair stays a race pair and is
// predicted. Replay's detector treats every atomic as synchronizing (as seq_cst would), so that
// pair cannot be shown; `late`, written by main after its store and read by the reader after its
// loop, races under either reading: it is predicted and confirmed with its exact pair (the data
// candidate's replay, free after its schedule, stops at it too).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=PREDICT %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>

static int data, late;
static atomic_int ready;

static void *reader(void *arg) {
  while (!atomic_load_explicit(&ready, memory_order_relaxed))
    ;
  int sum = data;
  sum += late;
  return (void *)(long)sum;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  data = 42;
  atomic_store_explicit(&ready, 1, memory_order_relaxed);
  late = 1;
  pthread_join(t, NULL);
  return 0;
}

// Relaxed: accesses only, no acquire or release record.
// DUMP-NOT: {{acquire|release}}

// PREDICT:      ilgen: 2 candidate(s): 2 race(s), 0 deadlock(s)
// PREDICT:      race pairs: 2 (0 removed by happens-before, 0 by lockset, 2 left)
// PREDICT:      candidate 1: data race on data
// PREDICT-NEXT:   write by thread 0 at {{.*}}atomic_relaxed_flag_race.c:30 in main
// PREDICT-NEXT:   read by thread 1 at {{.*}}atomic_relaxed_flag_race.c:22 in reader
// PREDICT:      candidate 2: data race on late
// PREDICT-NEXT:   write by thread 0 at {{.*}}atomic_relaxed_flag_race.c:32 in main
// PREDICT-NEXT:   read by thread 1 at {{.*}}atomic_relaxed_flag_race.c:23 in reader

// CHECK:      WARNING: ilgen: data race
// CHECK:        #0 reader {{.*}}atomic_relaxed_flag_race.c:23
// CHECK:        #0 main {{.*}}atomic_relaxed_flag_race.c:32
// CHECK:      ilgen: 2 candidate(s) replayed: 2 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK:      exit=66
