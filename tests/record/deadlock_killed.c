// A lock-order inversion that really deadlocks (the test barrier makes both threads take their
// first lock before either takes its second), killed with SIGKILL, which no handler can catch:
// the trace still reads, the run's end is unknown, and both threads show the lock they were
// blocked in as PENDING.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not timeout -s KILL 2 %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

#include "ilgen_test.h"

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
pthread_t t;
ilgen_test_barrier_t both_hold_one;

void *other(void *arg) {
  pthread_mutex_lock(&b);
  __ilgen_testonly_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&a);
  pthread_mutex_unlock(&a);
  pthread_mutex_unlock(&b);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&both_hold_one, 2);
  pthread_create(&t, NULL, other, NULL);
  pthread_mutex_lock(&a);
  __ilgen_testonly_barrier_wait(&both_hold_one);
  pthread_mutex_lock(&b);
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      run binary={{.*}} end=none (killed or still running) threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}deadlock_killed.c:29:3 main
// CHECK-NEXT: T0 lock a seq={{[0-9]+}} at {{.*}}deadlock_killed.c:30:3 main
// CHECK-NEXT: T0 lock b PENDING at {{.*}}deadlock_killed.c:32:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 lock b seq={{[0-9]+}} at {{.*}}deadlock_killed.c:19:3 other
// CHECK-NEXT: T1 lock a PENDING at {{.*}}deadlock_killed.c:21:3 other
// CHECK-NOT: {{.}}
