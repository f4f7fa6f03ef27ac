// atomic_relaxed_flag_race.c with thread fences: a release fence before the relaxed store and an
// acquire fence after the relaxed load that read it synchronize (C11 7.17.4), so `data` is
// ordered and no candidate (ThreadSanitizer, which does not model fences, reports it as a race;
// without fences in the pass, it was predicted and its replay refuted it). `late`, written
// after the store and read after the fence, still races: predicted and confirmed, its exact
// pair.
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
  atomic_thread_fence(memory_order_acquire);
  int sum = data;
  sum += late;
  return (void *)(long)sum;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  data = 42;
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&ready, 1, memory_order_relaxed);
  late = 1;
  pthread_join(t, NULL);
  return 0;
}

// The store released, the load that saw it acquired.
// DUMP:      T0 release_store ready {{.*}}atomic_fence_message_passing_race.c:33
// DUMP:      T1 acquire ready {{.*}}atomic_fence_message_passing_race.c:20

// PREDICT:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// PREDICT:      candidate 1: data race on late
// PREDICT-NEXT:   write by thread 0 at {{.*}}atomic_fence_message_passing_race.c:34 in main
// PREDICT-NEXT:   read by thread 1 at {{.*}}atomic_fence_message_passing_race.c:24 in reader
// PREDICT-NOT:  candidate 2
// PREDICT:      exit=66

// CHECK:      WARNING: ilgen: data race
// CHECK:        #0 reader {{.*}}atomic_fence_message_passing_race.c:24
// CHECK:        #0 main {{.*}}atomic_fence_message_passing_race.c:34
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK:      exit=66
