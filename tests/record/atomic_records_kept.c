// Two threads take turns on one counter (acq_rel read-modify-writes), handing the turn over
// through a flag: each read-modify-write after the other thread's is written whole (its acquire
// joins the other's release; its release is not the counter's last one of its thread), where
// atomic_redundant_records.c's thread alone writes one. The hand-overs are acquire loads of a
// flag the other thread released, so each one's first turn is written too.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen dump %t.trace | grep -c '^T[01] acquire count .*kept.c:20:' | FileCheck --check-prefix=FOUR %s
// RUN: %ilgen dump %t.trace | grep -c '^T[01] release_rmw count .*kept.c:20:' | FileCheck --check-prefix=FOUR %s
#include <pthread.h>
#include <stdatomic.h>

static atomic_int count, turn;

static void take(int me) {
  while (atomic_load_explicit(&turn, memory_order_acquire) != me)
    ;
  atomic_fetch_add_explicit(&count, 1, memory_order_acq_rel);
  atomic_store_explicit(&turn, 1 - me, memory_order_release);
}

static void *worker(void *arg) {
  take(1);
  take(1);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  take(0);
  take(0);
  pthread_join(t, NULL);
  return atomic_load(&count) == 4 ? 0 : 1;
}

// CHECK:      T1 acquire count seq={{[0-9]+}} at {{.*}}atomic_records_kept.c:20
// CHECK-NEXT: T1 atomic_write count size=4 at {{.*}}atomic_records_kept.c:20
// CHECK-NEXT: T1 release_rmw count seq={{[0-9]+}} at {{.*}}atomic_records_kept.c:20
// CHECK:      T1 acquire count seq={{[0-9]+}} at {{.*}}atomic_records_kept.c:20
// CHECK-NEXT: T1 atomic_write count size=4 at {{.*}}atomic_records_kept.c:20
// CHECK-NEXT: T1 release_rmw count seq={{[0-9]+}} at {{.*}}atomic_records_kept.c:20
// FOUR: {{^}}4{{$}}
