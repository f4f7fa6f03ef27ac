// A spin loop on an acquire load: the reader starts spinning before main publishes (main waits
// 20 ms after the reader is released from the barrier), so its first loads read 0. The recorder
// writes the loop's first turn and then nothing while no release is numbered, and the first turn
// after main's release, under the flag's lock: that turn's acquire comes after the release in the
// run's order, so the data's write is ordered before its read and there is no candidate. (Before
// atomics were recorded, one candidate whose replay ended "no error".)
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "ilgen_test.h"

static int data;
static atomic_int ready;
static ilgen_test_barrier_t spinning;

static void *reader(void *arg) {
  __ilgen_testonly_barrier_wait(&spinning);
  while (!atomic_load_explicit(&ready, memory_order_acquire))
    ;
  return (void *)(long)data;
}

int main(void) {
  __ilgen_testonly_barrier_init(&spinning, 2);
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  __ilgen_testonly_barrier_wait(&spinning);
  usleep(20000);
  data = 42;
  atomic_store_explicit(&ready, 1, memory_order_release);
  pthread_join(t, NULL);
  return 0;
}

// The release takes number N; the loop's first recorded turn saw the counter at N (before the
// release: it read 0), the next one at N + 1 (it read 1).
// DUMP:      T0 write data size=4
// DUMP-NEXT: T0 atomic_write ready size=4
// DUMP-NEXT: T0 release_store ready seq=[[#N:]]
// DUMP:      T1 acquire ready seq=[[#N]] at {{.*}}atomic_spin_flag_norace.c:24
// DUMP-NEXT: T1 atomic_read ready size=4
// DUMP-NEXT: T1 acquire ready seq=[[#N+1]] at {{.*}}atomic_spin_flag_norace.c:24
// DUMP-NEXT: T1 atomic_read ready size=4
// DUMP-NEXT: T1 read data size=4

// CHECK: ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK: exit=0
