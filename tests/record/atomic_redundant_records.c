// Atomic records that would order nothing new are left out. A thread alone on its atomics:
// - a loop of acq_rel read-modify-writes writes its first one's records alone: each later one
//   finds the file ending with its own last release there, which no thread acquired, so the
//   acquire half joins nothing and the access and release records before it stand for it;
// - a loop of acquire loads with plain writes between writes one acquire: no release was
//   recorded on the flag since, so its clock is already the thread's (the loads' accesses are
//   the segment's, recorded once);
// - a loop of acq_rel read-modify-writes with plain writes between writes one release, the
//   last: each one's release takes the place of the one before, still the file's last record
//   and acquired by no one (the accesses between them are written, as after a release).
// atomic_records_kept.c is the two-thread case, where they are written.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 acquire count' | FileCheck --check-prefix=ONE %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 release_rmw count' | FileCheck --check-prefix=ONE %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 atomic_write count' | FileCheck --check-prefix=ONE %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 acquire flag' | FileCheck --check-prefix=ONE %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 acquire tally' | FileCheck --check-prefix=ONE %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 release_rmw tally' | FileCheck --check-prefix=ONE %s
#include <pthread.h>
#include <stdatomic.h>

static atomic_int count, flag, tally;
static int out[5], seen[5];

static void *worker(void *arg) {
  for (int i = 0; i < 5; i++)
    atomic_fetch_add_explicit(&count, 1, memory_order_acq_rel);
  int v = 0;
  for (int i = 0; i < 5; i++) {
    v += atomic_load_explicit(&flag, memory_order_acquire);
    out[i] = v;
  }
  for (int i = 0; i < 5; i++) {
    atomic_fetch_add_explicit(&tally, 1, memory_order_acq_rel);
    seen[i] = i;
  }
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      T1 acquire count seq={{[0-9]+}} at {{.*}}atomic_redundant_records.c:30
// CHECK-NEXT: T1 atomic_write count size=4 at {{.*}}atomic_redundant_records.c:30
// CHECK-NEXT: T1 release_rmw count seq={{[0-9]+}} at {{.*}}atomic_redundant_records.c:30
// CHECK-NEXT: T1 acquire flag seq={{[0-9]+}} at {{.*}}atomic_redundant_records.c:33
// CHECK-NEXT: T1 atomic_read flag size=4 at {{.*}}atomic_redundant_records.c:33
// CHECK-NEXT: T1 write out size=20 at {{.*}}atomic_redundant_records.c:34
// CHECK-NEXT: T1 acquire tally seq={{[0-9]+}} at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 atomic_write tally size=4 at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 write seen size=4 at {{.*}}atomic_redundant_records.c:38
// CHECK-NEXT: T1 atomic_write tally size=4 at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 write seen+4 size=4 at {{.*}}atomic_redundant_records.c:38
// CHECK-NEXT: T1 atomic_write tally size=4 at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 write seen+8 size=4 at {{.*}}atomic_redundant_records.c:38
// CHECK-NEXT: T1 atomic_write tally size=4 at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 write seen+12 size=4 at {{.*}}atomic_redundant_records.c:38
// CHECK-NEXT: T1 atomic_write tally size=4 at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 release_rmw tally seq={{[0-9]+}} at {{.*}}atomic_redundant_records.c:37
// CHECK-NEXT: T1 write seen+16 size=4 at {{.*}}atomic_redundant_records.c:38
// CHECK-NEXT: T1 end
// ONE: {{^}}1{{$}}
