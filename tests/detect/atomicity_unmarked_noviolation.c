// The same lost update as atomicity_withdraw_violation.c, but withdraw is not marked atomic:
// `ilgen detect --atomicity` has no transaction to check and predicts nothing (and every access
// is under the lock: no race either).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
ilgen_test_barrier_t turn;

int withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
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

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// CHECK:      atomicity: 0 transactions; distinct violations: 0 with a schedule
// CHECK:      exit=0

// DUMP-NOT:   tx_
