// The leftover thread sleeps, then waits forever on a condition variable; main calls exit() at
// once. The exit grace lets the thread run to its wait (so the wait is in the trace) and ends as
// soon as the thread is blocked there, long before the 5 s grace asked for: `timeout 2` fails the
// test otherwise.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace
// RUN: sh -c 'ILGEN_OPTIONS=trace_dir=%t.trace:exit_grace_ms=5000 timeout 2 %t; echo "exit=$?"' \
// RUN:   | FileCheck --check-prefix=STATUS %s
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t never = PTHREAD_COND_INITIALIZER;

void *forever(void *arg) {
  usleep(50 * 1000);
  pthread_mutex_lock(&m);
  pthread_cond_wait(&never, &m);
  pthread_mutex_unlock(&m);
  return arg;
}

void finish(int status) {
  exit(status);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, forever, NULL);
  finish(3);
}

// STATUS: exit=3

// CHECK:      run binary={{.*}} end=exit threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}exit_grace_blocked.c:32:3 main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exit_grace_blocked.c:27:3 finish
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 lock m seq={{[0-9]+}} at {{.*}}exit_grace_blocked.c:20:3 forever
// CHECK-NEXT: T1 wait never mutex=m seq={{[0-9]+}} at {{.*}}exit_grace_blocked.c:21:3 forever
// CHECK-NEXT: T1 wake never mutex=m PENDING at {{.*}}exit_grace_blocked.c:21:3 forever
// CHECK-NOT:  {{.}}
