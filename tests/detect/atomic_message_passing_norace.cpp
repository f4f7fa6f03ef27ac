// Message passing through a std::atomic<bool>: main writes the data, then sets the flag with a
// release store; the reader spins on an acquire load of the flag, then reads the data. The store
// the load read from orders the data's write before its read, so the weakened happens-before
// leaves no race pair: no candidate, exit 0. (Before atomics were recorded in the run's order, this
// run gave one candidate, the data pair, whose replay ended "no error".) The reader starts
// spinning once main has stored (a test barrier, which the trace does not see): a reader spinning
// all along could keep the flag's stripe lock from main under load until main gave up and
// recorded its store as a relaxed one (`record::stripes::lock`'s patience), which made the test
// flaky; the run the analysis sees is the same.
//
// RUN: %ilgen c++ -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

#include <atomic>

#include "ilgen_test.h"

static int data;
static std::atomic<bool> ready;
static ilgen_test_barrier_t stored;

static void *reader(void *) {
  __ilgen_testonly_barrier_wait(&stored);
  while (!ready.load(std::memory_order_acquire))
    ;
  return reinterpret_cast<void *>(static_cast<long>(data));
}

int main() {
  __ilgen_testonly_barrier_init(&stored, 2);
  pthread_t t;
  pthread_create(&t, nullptr, reader, nullptr);
  data = 42;
  ready.store(true, std::memory_order_release);
  __ilgen_testonly_barrier_wait(&stored);
  void *got;
  pthread_join(t, &got);
  return got == reinterpret_cast<void *>(42L) ? 0 : 1;
}

// The data's write is before the release in main's file, its read after the acquire in the
// reader's.
// DUMP:      T0 write data size=4
// DUMP-NEXT: T0 atomic_write ready size=1
// DUMP-NEXT: T0 release_store ready seq=
// DUMP:      T1 acquire ready seq=
// DUMP-NEXT: T1 atomic_read ready size=1
// DUMP:      T1 read data size=4

// CHECK: ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK: exit=0
