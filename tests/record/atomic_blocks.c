// Atomic blocks reach the trace as one tx_begin/tx_end pair per outermost block: a function marked
// ILGEN_ATOMIC (called from another marked one, it stays inside its caller's block), and
// ILGEN_ATOMIC_BEGIN()/END() inside an unmarked function. Unmarked code records no marker. At
// -O2 the inliner dissolves the marked functions into their callers; the markers go with them.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen cc -g -O2 %s -o %t.o2
// RUN: rm -rf %t.o2.trace && env ILGEN_OPTIONS=trace_dir=%t.o2.trace %t.o2
// RUN: %ilgen dump %t.o2.trace | FileCheck %s
// Built without ilgen, the marks do nothing and need no runtime.
// RUN: %clang -O0 -I %S/../../include %s -o %t.plain -lpthread && %t.plain
#include <ilgen.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;

ILGEN_ATOMIC void deposit(int amount) {
  pthread_mutex_lock(&m);
  balance += amount;
  pthread_mutex_unlock(&m);
}

ILGEN_ATOMIC void transfer(int amount) {
  deposit(amount);
  deposit(-amount);
}

void unmarked(void) {
  pthread_mutex_lock(&m);
  balance++;
  pthread_mutex_unlock(&m);
}

void block(void) {
  ILGEN_ATOMIC_BEGIN();
  unmarked();
  ILGEN_ATOMIC_END();
}

int main(void) {
  transfer(5);
  unmarked();
  block();
  return balance == 102 ? 0 : 1;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 tx_begin seq={{[0-9]+}} at {{.*}}atomic_blocks.c:26:0
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 tx_end seq={{[0-9]+}} at {{.*}}atomic_blocks.c:29:1
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 tx_begin seq={{[0-9]+}} at {{.*}}atomic_blocks.c:38:3
// CHECK-NEXT: T0 lock m
// CHECK-NEXT: T0 write balance
// CHECK-NEXT: T0 unlock m
// CHECK-NEXT: T0 tx_end seq={{[0-9]+}} at {{.*}}atomic_blocks.c:40:3
// CHECK-NOT:  tx_
