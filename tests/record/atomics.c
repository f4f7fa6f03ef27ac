// Atomic accesses (C11 <stdatomic.h> and the __atomic builtins) are recorded with an atomic kind:
// loads as atomic_read; stores, read-modify-writes, exchanges and compare-exchanges as
// atomic_write. Plain accesses next to them stay plain. Each variable is touched once, so each
// record's kind is that one operation's. Every operation here has a memory order that acquires
// (acquire, acq_rel, seq_cst: a load or read-modify-write), releases (release, acq_rel, seq_cst:
// a store or successful read-modify-write) or both: an acquire record (the counter's value) comes
// before its access, a release record (the next number) after it, each ending the segment.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen dump %t.trace | grep -c '^T1 ' | FileCheck --check-prefix=COUNT %s
#include <pthread.h>
#include <stdatomic.h>

atomic_int c11_store, c11_load, c11_fetch_add, c11_cas;
int builtin_store, builtin_load, builtin_xchg, builtin_cas;
int plain;
pthread_t t;

void *worker(void *arg) {
  atomic_store(&c11_store, 1);
  int v = atomic_load(&c11_load);
  atomic_fetch_add(&c11_fetch_add, 2);
  int expected = 0;
  atomic_compare_exchange_strong(&c11_cas, &expected, 3);
  __atomic_store_n(&builtin_store, 4, __ATOMIC_RELEASE);
  v += __atomic_load_n(&builtin_load, __ATOMIC_ACQUIRE);
  __atomic_exchange_n(&builtin_xchg, 5, __ATOMIC_SEQ_CST);
  int want = 0;
  __atomic_compare_exchange_n(&builtin_cas, &want, 6, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  plain = v;
  return arg;
}

int main(void) {
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      T1 start
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 atomic_write c11_store size=4 at {{.*}}atomics.c:22:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_store c11_store seq={{[0-9]+}} at {{.*}}atomics.c:22:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire c11_load seq={{[0-9]+}} at {{.*}}atomics.c:23:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_read c11_load size=4 at {{.*}}atomics.c:23:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire c11_fetch_add seq={{[0-9]+}} at {{.*}}atomics.c:24:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_write c11_fetch_add size=4 at {{.*}}atomics.c:24:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_rmw c11_fetch_add seq={{[0-9]+}} at {{.*}}atomics.c:24:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire c11_cas seq={{[0-9]+}} at {{.*}}atomics.c:26:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_write c11_cas size=4 at {{.*}}atomics.c:26:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_rmw c11_cas seq={{[0-9]+}} at {{.*}}atomics.c:26:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_write builtin_store size=4 at {{.*}}atomics.c:27:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_store builtin_store seq={{[0-9]+}} at {{.*}}atomics.c:27:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire builtin_load seq={{[0-9]+}} at {{.*}}atomics.c:28:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_read builtin_load size=4 at {{.*}}atomics.c:28:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire builtin_xchg seq={{[0-9]+}} at {{.*}}atomics.c:29:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_write builtin_xchg size=4 at {{.*}}atomics.c:29:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_rmw builtin_xchg seq={{[0-9]+}} at {{.*}}atomics.c:29:{{[0-9]+}} worker
// CHECK-NEXT: T1 acquire builtin_cas seq={{[0-9]+}} at {{.*}}atomics.c:31:{{[0-9]+}} worker
// CHECK-NEXT: T1 atomic_write builtin_cas size=4 at {{.*}}atomics.c:31:{{[0-9]+}} worker
// CHECK-NEXT: T1 release_rmw builtin_cas seq={{[0-9]+}} at {{.*}}atomics.c:31:{{[0-9]+}} worker
// CHECK-NEXT: T1 write plain size=4 at {{.*}}atomics.c:32:{{[0-9]+}} worker
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}
// COUNT: {{^}}25{{$}}
