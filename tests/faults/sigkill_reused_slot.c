// The segment caches live in a pool of pending slots made once per process: a thread that ends
// gives its slot back, and the next thread takes it. Three threads run and end one after another,
// a fourth takes the slot the third gave back, writes `last4` and waits; main writes `last0` and
// the process dies by SIGKILL. The dump has both writes, each after its thread's last event (read
// from the slots), every ended thread ends with `end` and nothing after it, and one pending file
// held all five threads' slots.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && sh -c 'env ILGEN_OPTIONS=trace_dir=%t.trace %t; echo "status=$?"' | FileCheck --check-prefix=RUNS %s
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: ls %t.trace | FileCheck --check-prefix=FILES %s
// RUNS:       status=137
// CHECK:      run binary={{.*}} end=none (killed or still running) threads=5
// CHECK:      T0 join T3 seq={{[0-9]+}}
// CHECK-NEXT: T0 fork T4 seq={{[0-9]+}}
// CHECK-NEXT: T0 write last0 size=4 at {{.*}}sigkill_reused_slot.c:63:9 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK:      T1 write a1 size=4
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NEXT: T2 thread parent=T0 child=1
// CHECK:      T2 write a2 size=4
// CHECK-NEXT: T2 end seq={{[0-9]+}}
// CHECK-NEXT: T3 thread parent=T0 child=2
// CHECK:      T3 write a3 size=4
// CHECK-NEXT: T3 end seq={{[0-9]+}}
// CHECK-NEXT: T4 thread parent=T0 child=3
// CHECK-NEXT: T4 start seq={{[0-9]+}}
// CHECK:      T4 write last4 size=4 at {{.*}}sigkill_reused_slot.c:47:9 waiter
// CHECK-NOT:  {{.}}
// FILES:      pending.0
// FILES-NOT:  pending.1
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "ilgen_test.h"

int a1, a2, a3, last0, last4;
ilgen_test_barrier_t written;

static void *once(void *arg) {
  *(int *)arg = 1;
  return NULL;
}

static void *waiter(void *arg) {
  last4 = 4;
  __ilgen_testonly_barrier_wait(&written);
  pause();
  return arg;
}

int main(void) {
  int *cells[] = {&a1, &a2, &a3};
  pthread_t t;
  __ilgen_testonly_barrier_init(&written, 2);
  for (int i = 0; i < 3; i++) {
    pthread_create(&t, NULL, once, cells[i]);
    pthread_join(t, NULL);
  }
  pthread_create(&t, NULL, waiter, NULL);
  __ilgen_testonly_barrier_wait(&written);
  last0 = 5;
  kill(getpid(), SIGKILL);
  return 0;
}
