// A withdraw whose check and update are two critical sections: recorded with the two calls
// serial (the test barrier, which is no sync operation, lets the second customer in only after
// the first has finished), `ilgen detect --atomicity` predicts the lost update: the first
// customer reads the balance (line 32), the second withdraws in full (its write at line 37),
// then the first writes back its stale balance (line 37). The schedule stops the first customer
// after its check and lets it go on only after the second has unlocked. Compiled with ONE_SECTION
// the check and the update are one critical section: nothing can come between them, nothing is
// predicted.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: test -f %t.trace/schedule-1.json && test ! -e %t.trace/schedule-2.json
// Without --atomicity the markers change nothing: no race, no candidate.
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=PLAIN %s
//
// RUN: %ilgen cc -g -O0 -I %testinc -DONE_SECTION %s -o %t.one
// RUN: rm -rf %t.one.trace && env ILGEN_OPTIONS=trace_dir=%t.one.trace %t.one
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.one.trace; echo "exit=$?"' | FileCheck --check-prefix=ONE %s
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
ilgen_test_barrier_t turn;

ILGEN_ATOMIC int withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance;
#ifndef ONE_SECTION
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
#endif
  balance = seen - amount;
  pthread_mutex_unlock(&m);
  return seen >= amount;
}

void *first(void *arg) {
  withdraw(30);
  __ilgen_testonly_barrier_wait(&turn);
  return arg;
}

void *second(void *arg) {
  __ilgen_testonly_barrier_wait(&turn);
  withdraw(30);
  return arg;
}

int main(void) {
  pthread_t a, b;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, first, NULL);
  pthread_create(&b, NULL, second, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("balance %d\n", balance);
  return 0;
}

// CHECK:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// CHECK:      atomicity: 2 transactions; distinct violations: 1 with a schedule, 0 that no schedule reaches
// CHECK:      candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write (lost update: the block writes back a stale value)
// CHECK-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_withdraw_violation.c:30 in withdraw
// CHECK-NEXT:   e1 read by thread 1 at {{.*}}atomicity_withdraw_violation.c:32 in withdraw
// CHECK-NEXT:   f  write by thread 2 at {{.*}}atomicity_withdraw_violation.c:37 in withdraw
// CHECK-NEXT:   e2 write by thread 1 at {{.*}}atomicity_withdraw_violation.c:37 in withdraw
// CHECK-NEXT:   schedule:
// The forks and starts come in the recorded order (which the run's timing decides); then:
// CHECK:          thread 1: lock m {{.*}}:31
// CHECK-NEXT:     thread 1: unlock m {{.*}}:34
// CHECK-NOT:      thread 1:
// CHECK:          thread 2: lock m {{.*}}:31
// CHECK-NEXT:     thread 2: unlock m {{.*}}:34
// CHECK-NEXT:     thread 2: lock m {{.*}}:35
// CHECK-NEXT:     thread 2: unlock m {{.*}}:38
// CHECK-NEXT:     thread 1: lock m {{.*}}:35
// CHECK-NEXT: candidates written to
// CHECK-NEXT: exit=66

// PLAIN:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// PLAIN:      exit=0

// ONE:        ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// ONE:        atomicity: 2 transactions; distinct violations: 0 with a schedule, 0 that no schedule reaches
// ONE:        exit=0
