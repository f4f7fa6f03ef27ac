// The coverage check the pass inlines before plain loads and stores (instrument.rs `guard`)
// skips exactly what the runtime would have recorded nothing for: built with it and without it
// (`cover=0`), the worker's records are the same. Reads through an index the pass cannot follow
// of bytes the segment wrote need no record; q[3], never written, is read once; after a lock
// (a new segment) every read is recorded again, once (q[2] and q[3] as one range).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: env ILGEN_PASS_OPTIONS=cover=0 %ilgen cc -g -O0 %s -o %t.off
// RUN: %clang -g -O0 -fpass-plugin=%plugin -S -emit-llvm -o - %s | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: rm -rf %t.off.trace && env ILGEN_OPTIONS=trace_dir=%t.off.trace %t.off | FileCheck %s --check-prefix=OUT
// RUN: %ilgen dump %t.off.trace | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const int order[8] = {0, 2, 3, 2, 2, 0, 0, 3};
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static long sweep(int *q) {
  long sum = 0;
  for (int r = 0; r < 1000; r++)
    for (int i = 0; i < 8; i++)
      sum += q[order[i]];
  return sum;
}

static void *worker(void *arg) {
  int *q = arg;
  q[0] = 1;
  q[2] = 3;
  long sum = sweep(q);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  sum += sweep(q);
  q[1] = (int)sum;
  return 0;
}

int main(void) {
  int *q = calloc(4, sizeof(int));
  pthread_t t;
  pthread_create(&t, 0, worker, q);
  pthread_join(t, 0);
  printf("%d\n", q[1]);
  return 0;
}

// IR: call ptr @llvm.threadlocal.address.p0(ptr @__ilgen_cover)
// OUT: 24000

// CHECK: T1 write 0x[[#%x,Q:]] size=4 at {{.*}}inlined_coverage_check.c:31:8 worker
// CHECK-NEXT: T1 write 0x[[#%x,Q+8]] size=4 at {{.*}}inlined_coverage_check.c:32:8 worker
// CHECK-NEXT: T1 read 0x[[#%x,Q+12]] size=4 at {{.*}}inlined_coverage_check.c:25:14 sweep
// CHECK-NEXT: T1 lock
// CHECK-NEXT: T1 unlock
// CHECK-NEXT: T1 read 0x[[#%x,Q]] size=4 at {{.*}}inlined_coverage_check.c:25:14 sweep
// CHECK-NEXT: T1 read 0x[[#%x,Q+8]] size=8 at {{.*}}inlined_coverage_check.c:25:14 sweep
// CHECK-NEXT: T1 write 0x[[#%x,Q+4]] size=4 at {{.*}}inlined_coverage_check.c:37:8 worker
// CHECK-NEXT: T1 end
