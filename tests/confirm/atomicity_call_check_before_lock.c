// A recorded call's accesses before its first sync operation are in its transaction. `withdraw`
// is called with the account lock held: it reads the balance at once (the check, before its first
// lock), drops the lock while it writes the slip (slow work kept out of the lock), takes it back
// and writes back the stale balance. Under ILGEN_OPTIONS=calls=1 the call's tx_begin is written
// only when its first sync operation (the unlock) runs, yet the check it made before lies after
// the begin: `--atomic withdraw` (and '*') predicts the lost update and replay confirms it, with
// the check's and the update's lines and the other customer's write.
//
// The negative case: `deposit`'s caller reads the savings itself, under the same lock, before the
// call, which only writes it back after dropping and taking the lock: the read lies in the same
// segment as the call's entry but before it, outside the transaction, so `--atomic deposit` finds
// nothing (deposit's one write is serializable).
//
// Marked ILGEN_ATOMIC instead (MARKED), withdraw begins at its entry, so its check was always in
// the transaction: `--atomicity` on a run recorded without calls=1 finds the same.
//
// Under replay (WITHDRAW_REPLAY set) the test barrier is skipped: the schedule orders the threads.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace:calls=1 %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect --atomic withdraw --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICT
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomic withdraw %t.trace; echo "exit=$?"' | FileCheck %s
// The replayed run lost the second customer's withdrawal: 100 - 30 written over 70.
// RUN: grep '^balance 70 ' %t.trace/replay-1/stdout.txt
// RUN: sh -c '%ilgen detect --atomic "*" --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=STAR
// RUN: sh -c '%ilgen detect --atomic deposit --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=DEPOSIT
// RUN: %ilgen cc -g -O0 -I %testinc -DMARKED %s -o %t.marked
// RUN: rm -rf %t.marked.trace && env ILGEN_OPTIONS=trace_dir=%t.marked.trace %t.marked
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.marked.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICT
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ilgen_test.h"

#ifdef MARKED
#include <ilgen.h>
#define WITHDRAW ILGEN_ATOMIC
#else
#define WITHDRAW
#endif

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
int savings;
__thread int slips; // each customer's own
ilgen_test_barrier_t turn;
int replaying;

void take_turn(void) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&turn);
}

// Called with m held; returns with it held.
WITHDRAW void withdraw(int amount) {
  int seen = balance; // the check
  pthread_mutex_unlock(&m);
  slips++;
  pthread_mutex_lock(&m);
  balance = seen - amount; // the update
}

// Called with m held, with the savings its caller read; returns with m held.
void deposit(int seen, int amount) {
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  savings = seen + amount;
}

void *customer(void *arg) {
  int first = arg == NULL;
  if (!first)
    take_turn();
  pthread_mutex_lock(&m);
  withdraw(30);
  int seen = savings;
  deposit(seen, 10);
  pthread_mutex_unlock(&m);
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
  printf("balance %d savings %d\n", balance, savings);
  return 0;
}

// withdraw's tx_begin comes before its check, deposit's after its caller's read.
// DUMP:      T1 lock m {{.*}}:76:3 customer
// DUMP-NEXT: T1 tx_begin seq={{[0-9]+}} at {{.*}}atomicity_call_check_before_lock.c:57:0 withdraw
// DUMP-NEXT: T1 read balance size=4 at {{.*}}atomicity_call_check_before_lock.c:58:14 withdraw
// DUMP-NEXT: T1 unlock m {{.*}}:59:3 withdraw
// DUMP:      T1 tx_end seq={{[0-9]+}} at {{.*}}atomicity_call_check_before_lock.c:63:1 withdraw
// DUMP-NEXT: T1 read savings size=4 at {{.*}}atomicity_call_check_before_lock.c:78:14 customer
// DUMP-NEXT: T1 tx_begin seq={{[0-9]+}} at {{.*}}atomicity_call_check_before_lock.c:66:0 deposit
// DUMP-NEXT: T1 unlock m {{.*}}:67:3 deposit

// PREDICT:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// PREDICT:      atomicity: 2 transactions; distinct violations: 1 with a schedule
// PREDICT:      candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write (lost update: the block writes back a stale value)
// PREDICT-NEXT:   transaction of thread {{[12]}} begun at {{.*}}atomicity_call_check_before_lock.c:57 in withdraw
// PREDICT-NEXT:   e1 read by thread {{[12]}} at {{.*}}atomicity_call_check_before_lock.c:58 in withdraw
// PREDICT-NEXT:   f  write by thread {{[12]}} at {{.*}}atomicity_call_check_before_lock.c:62 in withdraw
// PREDICT-NEXT:   e2 write by thread {{[12]}} at {{.*}}atomicity_call_check_before_lock.c:62 in withdraw
// PREDICT:      exit=66

// CHECK:      WARNING: ilgen: atomicity violation (pid={{[0-9]+}})
// CHECK-NEXT:   Transaction of thread T[[TX:[12]]] began at:
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_call_check_before_lock.c:57{{$}}
// CHECK:        Read of size 4 at {{0x[0-9a-f]+}} by thread T[[TX]] (e1, in the transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_call_check_before_lock.c:58:14
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T{{[12]}} (f, another thread's, between e1 and e2):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_call_check_before_lock.c:62:11
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T[[TX]] (e2, in the same transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_call_check_before_lock.c:62:11
// CHECK:        Pattern read-write-write: lost update: the block writes back a stale value.
// CHECK:      SUMMARY: ilgen: atomicity violation {{.*}}atomicity_call_check_before_lock.c:58 in withdraw
// CHECK:      ilgen: 1 atomicity violation candidate(s): 1 confirmed
// CHECK:      exit=66

// STAR:       ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// STAR:       atomicity: 4 transactions; distinct violations: 1 with a schedule
// STAR:       candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write
// STAR-NEXT:    transaction of thread {{[12]}} begun at {{.*}}atomicity_call_check_before_lock.c:57 in withdraw
// STAR-NEXT:    e1 read by thread {{[12]}} at {{.*}}atomicity_call_check_before_lock.c:58 in withdraw
// STAR:       exit=66

// DEPOSIT:    ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// DEPOSIT:    atomicity: 2 transactions; distinct violations: 0 with a schedule
// DEPOSIT:    exit=0
