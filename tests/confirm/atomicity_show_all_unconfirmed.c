// An atomicity violation replay does not confirm, listed by `--show-all` with the reason. `withdraw`
// checks and updates the balance in two critical sections; the teller tops the account up only
// when it sees a withdrawal done (`balance < 100`). Recorded serially (the test barrier, no sync
// operation, lets the teller in after the customer), the teller saw 70 and wrote 80, so
// `--atomicity` predicts the lost update: the teller's write between withdraw's check and update.
// The prediction knows the sync operations, not the values: under its schedule the teller runs
// between the check and the update, sees 100 and writes nothing. The schedule is followed, f never
// runs, so the verdict is no error, and the report has no finding: one line says a candidate was
// not confirmed, and `--show-all` lists it with its transaction, e1, f and e2 and the reason (f,
// the second rank, never ran).
//
// Under replay (WITHDRAW_REPLAY set) the test barrier is skipped: the schedule orders the threads.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICT
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=HIDDEN
// The replayed run kept both: 100 - 30, no top-up.
// RUN: grep -x 'balance 70' %t.trace/replay-1/stdout.txt
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity --show-all %t.trace; echo "exit=$?"' | FileCheck %s
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
ilgen_test_barrier_t turn;
int replaying;

void take_turn(void) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&turn);
}

ILGEN_ATOMIC void withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance; // the check
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  balance = seen - amount; // the update
  pthread_mutex_unlock(&m);
}

void *customer(void *arg) {
  withdraw(30);
  take_turn();
  return arg;
}

void *teller(void *arg) {
  take_turn();
  pthread_mutex_lock(&m);
  if (balance < 100)
    balance += 10; // the top-up, only after a withdrawal
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t a, b;
  replaying = getenv("WITHDRAW_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, customer, NULL);
  pthread_create(&b, NULL, teller, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("balance %d\n", balance);
  return 0;
}

// PREDICT:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// PREDICT:      candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write (lost update: the block writes back a stale value)
// PREDICT-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_show_all_unconfirmed.c:38 in withdraw
// PREDICT-NEXT:   e1 read by thread 1 at {{.*}}atomicity_show_all_unconfirmed.c:40 in withdraw
// PREDICT-NEXT:   f  write by thread 2 at {{.*}}atomicity_show_all_unconfirmed.c:57 in teller
// PREDICT-NEXT:   e2 write by thread 1 at {{.*}}atomicity_show_all_unconfirmed.c:43 in withdraw
// PREDICT:      exit=66

// HIDDEN-NOT:   WARNING: ilgen
// HIDDEN:       ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// HIDDEN-NEXT:  ilgen: 1 atomicity violation candidate(s): 0 confirmed
// HIDDEN-NEXT:  ilgen: 0 finding(s) confirmed
// HIDDEN-NEXT:  ilgen: 1 candidate(s) not confirmed; --show-all lists them with the reason
// HIDDEN-NEXT:  exit=0

// CHECK-NOT:    WARNING: ilgen
// CHECK:        ilgen: 1 atomicity violation candidate(s): 0 confirmed
// CHECK:        candidate 1: atomicity_violation at {{.*}}atomicity_show_all_unconfirmed.c:38 and {{.*}}atomicity_show_all_unconfirmed.c:40 and {{.*}}atomicity_show_all_unconfirmed.c:57 and {{.*}}atomicity_show_all_unconfirmed.c:43: no error: the schedule was followed ({{[0-9]+}}/{{[0-9]+}} steps) but e1, f and e2 did not run in that order in their segments (ranks [Some(1), None, Some(2)])
// CHECK-NEXT:   exit=0
