// quick_exit() from a worker thread ends the process: the `exit` event is the worker's, at its
// call, and the trace is flushed although quick_exit runs no atexit handler (the runtime's is
// registered with at_quick_exit too): main's last write, made while it waits for the worker in
// join, is in the trace.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace
// RUN: sh -c 'ILGEN_OPTIONS=trace_dir=%t.trace %t; echo "exit=$?"' | FileCheck --check-prefix=STATUS %s
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <stdlib.h>

int before_join, in_worker;

void *worker(void *arg) {
  in_worker = 1;
  quick_exit(5);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  before_join = 1;
  pthread_join(t, NULL);
  return 0;
}

// STATUS: exit=5

// CHECK:      run binary={{.*}} end=exit threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}exit_quick_exit.c:23:3 main
// CHECK-NEXT: T0 write before_join size=4 at {{.*}}exit_quick_exit.c:24:15 main
// CHECK-NEXT: T0 join T1 PENDING at {{.*}}exit_quick_exit.c:25:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 write in_worker size=4 at {{.*}}exit_quick_exit.c:16:13 worker
// CHECK-NEXT: T1 exit seq={{[0-9]+}} at {{.*}}exit_quick_exit.c:17:3 worker
// CHECK-NOT:  {{.}}
