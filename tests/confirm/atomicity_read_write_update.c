// The lost update of atomicity_lost_update.c where the other thread's update is one
// read-modify-write (`balance -= amount`, one `__ilgen_read_write` hook): the schedule watches
// that access (f, its write), and the replay checks a read-modify-write's two halves in one entry
// of the thread, deciding both at once on the fast path only when nothing watches. Replay confirms
// the violation only if f's hook still reaches the watch (it fails when the combined path skips it).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity %t.trace; echo "exit=$?"' | FileCheck %s
// The replayed run lost the payment: 100 - 30 written over 70.
// RUN: grep -x 'balance 70' %t.trace/replay-1/stdout.txt
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

ILGEN_ATOMIC int withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance; // the check
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  balance = seen - amount; // the update
  pthread_mutex_unlock(&m);
  return seen >= amount;
}

void pay(int amount) {
  pthread_mutex_lock(&m);
  balance -= amount;
  pthread_mutex_unlock(&m);
}

void *first(void *arg) {
  withdraw(30);
  take_turn();
  return arg;
}

void *second(void *arg) {
  take_turn();
  pay(30);
  return arg;
}

int main(void) {
  pthread_t a, b;
  replaying = getenv("WITHDRAW_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, first, NULL);
  pthread_create(&b, NULL, second, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("balance %d\n", balance);
  return 0;
}

// CHECK:      WARNING: ilgen: atomicity violation (pid={{[0-9]+}})
// CHECK:        Read of size 4 at {{0x[0-9a-f]+}} by thread T1 (e1, in the transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_read_write_update.c:31:
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T2 (f, another thread's, between e1 and e2):
// CHECK-NEXT:     #0 pay {{.*}}atomicity_read_write_update.c:41:
// CHECK:        Write of size 4 at {{0x[0-9a-f]+}} by thread T1 (e2, in the same transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_read_write_update.c:34:
// CHECK:      ilgen: 1 atomicity violation candidate(s): 1 confirmed
// CHECK:      exit=66
