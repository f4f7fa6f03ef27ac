// `ilgen detect --atomic '*'` on a program that marks nothing: recorded with
// ILGEN_OPTIONS=calls=1, each call of a function that synchronizes is in the trace, and '*' makes
// each call a thread's start routine makes a transaction (the paper's methods), never the start
// routine itself. Here `withdraw` checks and updates the balance in two critical sections; the two
// customers run it serially (the test barrier is no sync operation). '*' predicts the lost update
// and replay confirms it, naming the check's and the update's lines and the other customer's write;
// `--atomic withdraw` finds the same. Without --atomic (marked blocks only) nothing; `--atomic
// audit`, which withdraw does not match, nothing (audit's one critical section is serializable);
// `--atomic customer`, the start routine, no transaction at all. A run recorded without calls=1
// has only marked blocks to choose from, and the warning says how to record the calls.
//
// Under replay (WITHDRAW_REPLAY set) the test barrier is skipped: the schedule orders the threads.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace:calls=1 %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect --atomic "*" --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICT
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomic "*" %t.trace; echo "exit=$?"' | FileCheck %s
// The replayed run lost the second customer's withdrawal: 100 - 30 written over 70.
// RUN: grep -x 'balance 70' %t.trace/replay-1/stdout.txt
// RUN: sh -c '%ilgen detect --atomic withdraw --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NAMED
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PLAIN
// RUN: sh -c '%ilgen detect --atomic audit --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=AUDIT
// RUN: sh -c '%ilgen detect --atomic customer --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=START
// RUN: rm -rf %t.nocalls && env ILGEN_OPTIONS=trace_dir=%t.nocalls %t
// RUN: sh -c '%ilgen detect --atomic "*" --no-replay %t.nocalls 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=NOCALLS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
int audited;
ilgen_test_barrier_t turn;
int replaying;

void take_turn(void) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&turn);
}

int withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance; // the check
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  balance = seen - amount; // the update
  pthread_mutex_unlock(&m);
  return seen >= amount;
}

void audit(void) {
  pthread_mutex_lock(&m);
  audited = balance;
  pthread_mutex_unlock(&m);
}

void *customer(void *arg) {
  int first = arg == NULL;
  if (!first)
    take_turn();
  withdraw(30);
  audit();
  if (first)
    take_turn();
  return arg;
}

int main(void) {
  pthread_t a, b;
  replaying = getenv("WITHDRAW_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, customer, NULL);
  pthread_create(&b, NULL, customer, &b);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("balance %d\n", balance);
  return 0;
}

// Each customer's calls, begun where a sync operation ran inside (take_turn has none: no call).
// DUMP:      T1 thread
// DUMP:      T1 tx_begin seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:61:0 customer
// DUMP-NEXT: T1 tx_begin seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:45:0 withdraw
// DUMP-NEXT: T1 lock m
// DUMP:      T1 unlock m {{.*}}:51:3 withdraw
// DUMP-NEXT: T1 tx_end seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:52:3 withdraw
// DUMP-NEXT: T1 tx_begin seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:55:0 audit
// DUMP:      T1 tx_end seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:59:1 audit
// DUMP-NOT:  tx_begin
// DUMP:      T1 tx_end seq={{[0-9]+}} at {{.*}}atomicity_calls_star.c:69:3 customer
// DUMP-NEXT: T1 end

// PREDICT:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// PREDICT:      atomicity: 4 transactions; distinct violations: 1 with a schedule
// PREDICT:      candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write (lost update: the block writes back a stale value)
// PREDICT-NEXT:   transaction of thread {{[12]}} begun at {{.*}}atomicity_calls_star.c:45 in withdraw
// PREDICT-NEXT:   e1 read by thread {{[12]}} at {{.*}}atomicity_calls_star.c:47 in withdraw
// PREDICT-NEXT:   f  write by thread {{[12]}} at {{.*}}atomicity_calls_star.c:50 in withdraw
// PREDICT-NEXT:   e2 write by thread {{[12]}} at {{.*}}atomicity_calls_star.c:50 in withdraw
// PREDICT:      exit=66

// CHECK:      WARNING: ilgen: atomicity violation (pid={{[0-9]+}})
// CHECK-NEXT:   Transaction of thread T[[TX:[12]]] began at:
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_calls_star.c:45{{$}}
// CHECK:        Read of size 4 at {{0x[0-9a-f]+}} by thread T[[TX]] (e1, in the transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_calls_star.c:47:14
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T{{[12]}} (f, another thread's, between e1 and e2):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_calls_star.c:50:11
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T[[TX]] (e2, in the same transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_calls_star.c:50:11
// CHECK:        Pattern read-write-write: lost update: the block writes back a stale value.
// CHECK:      SUMMARY: ilgen: atomicity violation {{.*}}atomicity_calls_star.c:47 in withdraw
// CHECK:      ilgen: 1 atomicity violation candidate(s): 1 confirmed
// CHECK:      exit=66

// NAMED:      atomicity: 2 transactions; distinct violations: 1 with a schedule
// NAMED:      transaction of thread {{[12]}} begun at {{.*}}atomicity_calls_star.c:45 in withdraw
// NAMED:      exit=66

// NONE:       ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// NONE:       atomicity: 0 transactions;
// NONE:       exit=0

// PLAIN:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// PLAIN:      exit=0

// AUDIT:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// AUDIT:      atomicity: 2 transactions; distinct violations: 0 with a schedule
// AUDIT:      exit=0

// START:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// START:      atomicity: 0 transactions;
// START:      exit=0

// NOCALLS:      ilgen: warning: --atomic `*` matches no transaction: the run recorded none; the run recorded no calls: record it with ILGEN_OPTIONS=calls=1 to make any function that synchronizes a transaction
// NOCALLS:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// NOCALLS:      exit=0
