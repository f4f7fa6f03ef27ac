// A stack variable whose address never leaves its function cannot be reached by another thread:
// the pass leaves its accesses uninstrumented, so the worker's only record is the global result.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

int result;

void *worker(void *arg) {
  int sum = 0;
  int squares[8];
  for (int i = 0; i < 8; i++)
    squares[i] = i * i;
  for (int i = 0; i < 8; i++)
    sum += squares[i];
  result = sum;
  return arg;
}

pthread_t t;

int main(void) {
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return result == 140 ? 0 : 1;
}

// CHECK:      T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 write result size=4 at {{.*}}local_no_events.c:18:{{[0-9]+}} worker
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}
