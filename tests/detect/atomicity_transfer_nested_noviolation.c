// Nested locks across two accounts, serializable: each transfer takes both accounts' locks, in
// the same order, before it reads and writes either balance, and releases them in reverse. No
// other thread's access can come between two accesses of one transfer: `ilgen detect
// --atomicity` predicts nothing (and there is no race and no lock-order inversion either).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

struct account {
  pthread_mutex_t lock;
  int balance;
};

struct account a = {PTHREAD_MUTEX_INITIALIZER, 100}, b = {PTHREAD_MUTEX_INITIALIZER, 100};
ilgen_test_barrier_t turn;

ILGEN_ATOMIC void transfer(struct account *from, struct account *to, int amount) {
  pthread_mutex_lock(&a.lock);
  pthread_mutex_lock(&b.lock);
  from->balance -= amount;
  to->balance += amount;
  pthread_mutex_unlock(&b.lock);
  pthread_mutex_unlock(&a.lock);
}

void *first(void *arg) {
  transfer(&a, &b, 10);
  __ilgen_testonly_barrier_wait(&turn);
  return arg;
}

void *second(void *arg) {
  __ilgen_testonly_barrier_wait(&turn);
  transfer(&b, &a, 20);
  return arg;
}

int main(void) {
  pthread_t t1, t2;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&t1, NULL, first, NULL);
  pthread_create(&t2, NULL, second, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  printf("%d %d\n", a.balance, b.balance);
  return 0;
}

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// CHECK:      atomicity: 2 transactions; distinct violations: 0 with a schedule, 0 that no schedule reaches
// CHECK:      exit=0
