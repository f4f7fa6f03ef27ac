// `ilgen detect --atomic GLOB` (repeatable, implies --atomicity) checks only the recorded
// transactions whose function matches: here two marked functions each have a violation, a lost
// update in `withdraw` and two different reads in `audit`, recorded serially (the test barrier is
// no sync operation). Without --atomic both are reported; `--atomic 'with*'` keeps withdraw's,
// `--atomic audit` audit's, both globs both; a glob that matches no recorded transaction is
// reported as such, and then nothing is checked. It selects among what the run recorded: here
// no calls (ILGEN_OPTIONS=calls=1 records them, atomicity_calls_star.c), so marked blocks only.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=BOTH
// RUN: sh -c '%ilgen detect --atomic "with*" --atomic audit --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=BOTH
// RUN: sh -c '%ilgen detect --atomic "with*" --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=WITHDRAW
// RUN: sh -c '%ilgen detect --atomic audit --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=AUDIT
// RUN: sh -c '%ilgen detect --atomic "dep*" --no-replay %t.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
int first, second;
ilgen_test_barrier_t turn;

ILGEN_ATOMIC void withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  balance = seen - amount;
  pthread_mutex_unlock(&m);
}

ILGEN_ATOMIC void audit(void) {
  pthread_mutex_lock(&m);
  first = balance;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  second = balance;
  pthread_mutex_unlock(&m);
}

void *clerk(void *arg) {
  withdraw(10);
  audit();
  __ilgen_testonly_barrier_wait(&turn);
  return arg;
}

void *customer(void *arg) {
  __ilgen_testonly_barrier_wait(&turn);
  withdraw(10);
  return arg;
}

int main(void) {
  pthread_t a, b;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, clerk, NULL);
  pthread_create(&b, NULL, customer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d %d\n", balance, first, second);
  return 0;
}

// BOTH:      ilgen: 2 candidate(s): 0 race(s), 0 deadlock(s), 2 atomicity violation(s)
// BOTH:      atomicity: 3 transactions;
// BOTH:      read-write-write
// BOTH-NEXT:   transaction of thread {{[12]}} begun at {{.*}}atomicity_select_by_name.c:27 in withdraw
// BOTH:      read-write-read
// BOTH-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_select_by_name.c:36 in audit
// BOTH:      exit=66

// WITHDRAW:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// WITHDRAW:      atomicity: 2 transactions;
// WITHDRAW:      read-write-write
// WITHDRAW-NEXT:   transaction of thread {{[12]}} begun at {{.*}}atomicity_select_by_name.c:27 in withdraw
// WITHDRAW-NOT:  in audit
// WITHDRAW:      exit=66

// AUDIT:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// AUDIT:      atomicity: 1 transactions;
// AUDIT:      read-write-read
// AUDIT-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_select_by_name.c:36 in audit
// AUDIT:      exit=66

// NONE:      ilgen: warning: --atomic `dep*` matches none of the recorded transactions (audit, withdraw)
// NONE:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// NONE:      atomicity: 0 transactions;
// NONE:      exit=0
