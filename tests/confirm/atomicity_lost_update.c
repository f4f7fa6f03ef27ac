// A withdraw whose check and update are two critical sections, recorded with the two calls serial
// (the test barrier, which is no sync operation, lets the second customer in only after the first
// has finished). `ilgen detect --atomicity` predicts the lost update: the first customer reads the
// balance ("the check"), the second withdraws in full ("the update"), then the first writes its
// stale balance back ("the update"); the schedule stops the first customer after its check and
// lets it lock for its update only after the second has unlocked. Replay confirms it: the runtime
// saw the three accesses run in that order, each in the segment the candidate named, and the
// replayed run printed the lost withdrawal. The report is shaped like a race report, with the transaction's
// beginning, the pattern and a SUMMARY line; exit 66; JSON and SARIF (its own rule) carry it too.
// The same function with one critical section (ONE_SECTION), or not marked atomic (UNMARKED):
// nothing predicted.
//
// Under replay (WITHDRAW_REPLAY set) the test barrier is skipped: the schedule orders the threads.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICT
// RUN: test ! -e %t.trace/schedule-1.json
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity %t.trace; echo "exit=$?"' | FileCheck %s
// The replayed run lost the second customer's withdrawal: 100 - 30 written over 70.
// RUN: grep -x 'balance 70' %t.trace/replay-1/stdout.txt && test -f %t.trace/schedule-1.json && test ! -e %t.trace/schedule-2.json
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=JSON-VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect --atomicity --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=SARIF-VALID
// RUN: python3 %S/Inputs/sarif_summary.py %t.sarif | FileCheck %s --check-prefix=SARIF
// Without --atomicity the markers change nothing: no race, no candidate.
// RUN: env WITHDRAW_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PLAIN
//
// RUN: %ilgen cc -g -O0 -I %testinc -DONE_SECTION %s -o %t.one
// RUN: rm -rf %t.one.trace && env ILGEN_OPTIONS=trace_dir=%t.one.trace %t.one
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.one.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: %ilgen cc -g -O0 -I %testinc -DUNMARKED %s -o %t.unmarked
// RUN: rm -rf %t.unmarked.trace && env ILGEN_OPTIONS=trace_dir=%t.unmarked.trace %t.unmarked
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.unmarked.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: %ilgen dump %t.unmarked.trace | FileCheck %s --check-prefix=UNMARKED
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ilgen_test.h"

#ifdef UNMARKED
#define TRANSACTION
#else
#define TRANSACTION ILGEN_ATOMIC
#endif

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int balance = 100;
ilgen_test_barrier_t turn;
int replaying;

void take_turn(void) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&turn);
}

TRANSACTION int withdraw(int amount) {
  pthread_mutex_lock(&m);
  int seen = balance; // the check
#ifndef ONE_SECTION
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
#endif
  balance = seen - amount; // the update
  pthread_mutex_unlock(&m);
  return seen >= amount;
}

void *first(void *arg) {
  withdraw(30);
  take_turn();
  return arg;
}

void *second(void *arg) {
  take_turn();
  withdraw(30);
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

// PREDICT:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// PREDICT:      atomicity: 2 transactions; distinct violations: 1 with a schedule, 0 that no schedule reaches
// PREDICT:      candidate 1: atomicity violation on balance ({{0x[0-9a-f]+}}) (4 bytes), read-write-write (lost update: the block writes back a stale value)
// PREDICT-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_lost_update.c:61 in withdraw
// PREDICT-NEXT:   e1 read by thread 1 at {{.*}}atomicity_lost_update.c:63 in withdraw
// PREDICT-NEXT:   f  write by thread 2 at {{.*}}atomicity_lost_update.c:68 in withdraw
// PREDICT-NEXT:   e2 write by thread 1 at {{.*}}atomicity_lost_update.c:68 in withdraw
// PREDICT-NEXT:   schedule:
// The forks and starts come in the recorded order (which the run's timing decides); then:
// PREDICT:          thread 1: lock m {{.*}}:62
// PREDICT-NEXT:     thread 1: unlock m {{.*}}:65
// PREDICT-NOT:      thread 1:
// PREDICT:          thread 2: lock m {{.*}}:62
// PREDICT-NEXT:     thread 2: unlock m {{.*}}:65
// PREDICT-NEXT:     thread 2: lock m {{.*}}:66
// PREDICT-NEXT:     thread 2: unlock m {{.*}}:69
// PREDICT-NEXT:     thread 1: lock m {{.*}}:66
// PREDICT-NEXT: candidates written to
// PREDICT-NEXT: exit=66

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: atomicity violation (pid={{[0-9]+}})
// CHECK-NEXT:   Transaction of thread T1 began at:
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_lost_update.c:61{{$}}
// CHECK-EMPTY:
// CHECK-NEXT:   Read of size 4 at {{0x[0-9a-f]+}} by thread T1 (e1, in the transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_lost_update.c:63:14
// CHECK-EMPTY:
// CHECK-NEXT:   Write of size 4 at {{0x[0-9a-f]+}} by thread T2 (f, another thread's, between e1 and e2):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_lost_update.c:68:11
// CHECK-EMPTY:
// CHECK-NEXT:   Write of size 4 at {{0x[0-9a-f]+}} by thread T1 (e2, in the same transaction):
// CHECK-NEXT:     #0 withdraw {{.*}}atomicity_lost_update.c:68:11
// CHECK-EMPTY:
// CHECK-NEXT:   Pattern read-write-write: lost update: the block writes back a stale value.
// CHECK-NEXT:   Location is global 'balance' of size 4 at {{0x[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in {{.*}}):
// CHECK:      SUMMARY: ilgen: atomicity violation {{.*}}atomicity_lost_update.c:63 in withdraw
// CHECK-NEXT: ==================
// CHECK:      ilgen: 1 atomicity violation candidate(s): 1 confirmed
// CHECK:      exit=66

// EXIT66: exit=66
// JSON-VALID: valid: ilgen report, format version 11
// JSON:      "confirmed_atomicity": 1,
// JSON:      "kind": "atomicity",
// JSON:      "pattern": "read_write_write",
// SARIF-VALID: valid: Static Analysis Results Format (SARIF) Version 2.1.0-rtm.5 JSON Schema
// SARIF:      rule ilgen/atomicity-violation
// SARIF:      result ilgen/atomicity-violation error atomicity_lost_update.c:68:11

// PLAIN:      ilgen: 0 candidate(s) replayed
// PLAIN:      exit=0

// NONE:       ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s), 0 atomicity violation(s)
// NONE:       exit=0

// UNMARKED:     T1 thread
// UNMARKED-NOT: tx_
