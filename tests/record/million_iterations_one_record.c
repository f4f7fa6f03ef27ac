// A million increments of one variable within one segment (no sync operation between them) are
// one range in the thread's segment cache: the trace holds one record, not a million.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// Exactly five lines for the thread: its thread line, start, its stack, the one access, end.
// RUN: %ilgen dump %t.trace | grep -c '^T1 ' | FileCheck --check-prefix=COUNT %s
#include <pthread.h>

long counter;
pthread_t t;

void *spin(void *arg) {
  for (long i = 0; i < 1000000; i++)
    counter++;
  return arg;
}

int main(void) {
  pthread_create(&t, NULL, spin, NULL);
  pthread_join(t, NULL);
  return counter == 1000000 ? 0 : 1;
}

// CHECK:      T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 write counter size=8 at {{.*}}million_iterations_one_record.c:16:{{[0-9]+}} spin
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}

// COUNT: {{^}}5{{$}}
