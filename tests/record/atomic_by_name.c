// Functions marked atomic by name when compiling (ILGEN_PASS_OPTIONS=atomic=fun:GLOB), without
// touching the source: each call of `deposit` is a transaction, `audit` is none.
//
// RUN: env ILGEN_PASS_OPTIONS='atomic=fun:dep*' %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// A pattern that is no fun:GLOB is reported, and the program still builds.
// RUN: env ILGEN_PASS_OPTIONS='atomic=src:x.c' %ilgen cc -g -O0 %s -o %t.bad 2>&1 | FileCheck --check-prefix=BAD %s
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance;

void deposit(int n) {
  pthread_mutex_lock(&m);
  balance += n;
  pthread_mutex_unlock(&m);
}

int audit(void) {
  pthread_mutex_lock(&m);
  int b = balance;
  pthread_mutex_unlock(&m);
  return b;
}

int main(void) {
  deposit(1);
  deposit(2);
  return audit() == 3 ? 0 : 1;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 tx_begin seq={{[0-9]+}} at {{.*}}atomic_by_name.c:14:0 deposit
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 tx_end seq={{[0-9]+}} at {{.*}}atomic_by_name.c:18:1 deposit
// CHECK-NEXT: T0 tx_begin
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 tx_end
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 read balance
// CHECK-NEXT: T0 unlock m
// CHECK-NOT:  tx_

// BAD: ilgen-pass: atomic pattern `src:x.c` is not fun:GLOB
