// A run that calls abort() (as a failed assert does) still leaves a complete trace, including a
// worker thread's accesses that were still in its segment cache.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not --crash %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int by_main, by_worker;
pthread_t t;
ilgen_test_barrier_t worker_wrote;

void *worker(void *arg) {
  by_worker = 1;
  __ilgen_testonly_barrier_wait(&worker_wrote);
  // Stay in the segment (no sync op) while main aborts.
  for (;;)
    __ilgen_testonly_barrier_wait(&worker_wrote);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&worker_wrote, 2);
  pthread_create(&t, NULL, worker, NULL);
  __ilgen_testonly_barrier_wait(&worker_wrote);
  by_main = 1;
  abort();
}

// CHECK:      run binary={{.*}} end=signal 6 (SIGABRT) threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}abort.c:27:3 main
// CHECK-NEXT: T0 write by_main size=4 at {{.*}}abort.c:29:{{[0-9]+}} main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 write by_worker size=4 at {{.*}}abort.c:17:{{[0-9]+}} worker
// CHECK-NOT: {{.}}
