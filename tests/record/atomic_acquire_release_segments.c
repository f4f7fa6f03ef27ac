// What an acquire and a release do to the segment's records: the accesses before either are
// written before its record; an access repeated after an acquire is not recorded again (its
// record before the acquire stands for it, ordered against everything at most as much), one
// repeated after a release is (it is not ordered before the release's acquirers). The atomic
// operations' own accesses belong to the segment between their records: the load of flag is
// held by the store's record (a write of the same bytes in the same segment).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>

static int x, y;
static atomic_int flag;

static void *worker(void *arg) {
  int sum = x;
  sum += atomic_load_explicit(&flag, memory_order_acquire);
  sum += x;
  sum += y;
  atomic_store_explicit(&flag, sum, memory_order_release);
  sum += x;
  return (void *)(long)sum;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      T1 read x size=4 at {{.*}}atomic_acquire_release_segments.c:18
// CHECK-NEXT: T1 acquire flag seq={{[0-9]+}} at {{.*}}atomic_acquire_release_segments.c:19
// CHECK-NEXT: T1 atomic_write flag size=4 at {{.*}}atomic_acquire_release_segments.c:22
// CHECK-NEXT: T1 read y size=4 at {{.*}}atomic_acquire_release_segments.c:21
// CHECK-NEXT: T1 release_store flag seq={{[0-9]+}} at {{.*}}atomic_acquire_release_segments.c:22
// CHECK-NEXT: T1 read x size=4 at {{.*}}atomic_acquire_release_segments.c:23
// CHECK-NEXT: T1 end
