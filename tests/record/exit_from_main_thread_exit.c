// main ends with pthread_exit: the process lives on, as it does without ilgen, until its last
// thread ends; no thread exits the process through exit(), so the trace has no `exit` event,
// and the worker's write, long after main left, is recorded.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace:exit_grace_ms=0 %t \
// RUN:   | FileCheck --check-prefix=OUT %s
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int late;

void *worker(void *arg) {
  usleep(100 * 1000);
  late = 1;
  printf("worker done\n");
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_exit(NULL);
}

// OUT: worker done

// CHECK:      run binary={{.*}} end=exit threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}exit_from_main_thread_exit.c:24:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 write late size=4 at {{.*}}exit_from_main_thread_exit.c:17:8 worker
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT:  {{.}}
