// A spinlock taken by a compare-exchange that acquires on success and is relaxed on failure
// (the usual lock acquisition) and released by a release store: the compare-exchange that took
// the lock acquires, so the sections are ordered and `inside` has no candidate (the pass once
// took such a compare-exchange for one that never acquires, and each section pair was
// predicted and refuted by replay). `outside`, updated by both threads after the unlock,
// races: predicted and confirmed, its exact pair.
//
// RUN: %ilgen cc -g -O1 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=PREDICT %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>

static atomic_int lock;
static int inside, outside;

static void take(void) {
  int expected = 0;
  while (!atomic_compare_exchange_weak_explicit(&lock, &expected, 1, memory_order_acquire,
                                                memory_order_relaxed))
    expected = 0;
}

static void *work(void *arg) {
  for (int i = 0; i < 3; i++) {
    take();
    inside++;
    atomic_store_explicit(&lock, 0, memory_order_release);
  }
  outside++;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, work, NULL);
  pthread_create(&b, NULL, work, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  return inside == 6 ? 0 : 1;
}

// DUMP:      acquire lock {{.*}}atomic_cas_spinlock_race.c:21

// PREDICT:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// PREDICT:      candidate 1: data race on outside
// PREDICT-NOT:  candidate 2
// PREDICT:      exit=66

// CHECK:      WARNING: ilgen: data race
// CHECK:        #0 work {{.*}}atomic_cas_spinlock_race.c:32
// CHECK:        #0 work {{.*}}atomic_cas_spinlock_race.c:32
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK:      exit=66
