// The recorded run itself deadlocks: main signals c before the waiter waits (the test barrier
// holds the waiter until main has signalled), and the wait re-checks no predicate, so the waiter
// waits forever and main hangs in its join. `ilgen run --timeout 2` stops it; `ilgen detect`
// reports the deadlock as observed in the recorded run, each thread blocked at its line, with
// the lost wakeup (the signal's line and the wait's), exit 66. The replay of the predicted
// schedule confirms the same deadlock: one finding.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace
// RUN: python3 %S/../Inputs/within.py 10 124 -- %ilgen run --timeout 2 --out %t.trace -- %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/../confirm/Inputs/validate.py %S/../confirm/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: FileCheck %s --check-prefix=SARIF < %t.sarif
//
// Killed while the worker merely sleeps (main blocked in its join, the worker in no sync
// operation): the worker could still have ended, so nothing was observed. (The analysis still
// predicts the pending join as a deadlock candidate; its replay sleeps too and is cut short.)
// RUN: rm -rf %t.sleep
// RUN: python3 %S/../Inputs/within.py 10 124 -- %ilgen run --timeout 1 --out %t.sleep -- %t sleep
// RUN: sh -c '%ilgen detect --replay-timeout 2 %t.sleep; echo "exit=$?"' | FileCheck %s --check-prefix=SLEEP
#include <pthread.h>
#include <unistd.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
ilgen_test_barrier_t signalled;

void *waiter(void *arg) {
  __ilgen_testonly_barrier_wait(&signalled);
  pthread_mutex_lock(&m);
  pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  return arg;
}

void *sleeper(void *arg) {
  sleep(30);
  return arg;
}

int main(int argc, char **argv) {
  pthread_t t;
  (void)argv;
  if (argc > 1) {
    pthread_create(&t, NULL, sleeper, NULL);
    pthread_join(t, NULL);
    return 0;
  }
  __ilgen_testonly_barrier_init(&signalled, 2);
  pthread_create(&t, NULL, waiter, NULL);
  pthread_mutex_lock(&m);
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&signalled);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: deadlock (observed in the recorded run) (pid={{[0-9]+}})
// CHECK-NEXT:   Main thread is blocked in join of thread T1:
// CHECK-NEXT:     #0 main /{{.*}}observed_lost_wakeup.c:60:3
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 is blocked in wait of 'c' (0x{{[0-9a-f]+}}):
// CHECK-NEXT:     #0 waiter /{{.*}}observed_lost_wakeup.c:36:3
// CHECK-EMPTY:
// CHECK-NEXT:   Lost wakeup: Main thread signalled 'c' (0x{{[0-9a-f]+}}) before thread T1 waited on it, and the wait does not re-check a predicate in a loop: the wakeup was spent before the wait began.
// CHECK-NEXT:     signal at /{{.*}}observed_lost_wakeup.c:57 in main
// CHECK-NEXT:     wait at /{{.*}}observed_lost_wakeup.c:36 in waiter
// CHECK:      SUMMARY: ilgen: deadlock /{{.*}}observed_lost_wakeup.c:60 in main
// CHECK-NEXT: ==================
// CHECK:      ilgen: 1 deadlock(s) observed in the recorded run
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// EXIT66: exit=66
// VALID: valid: ilgen report, format version 11
// JSON:      "observed_deadlocks": 1
// JSON:      "kind": "deadlock",
// JSON:      "observed": true,
// JSON:      "lost_wakeups": [
// JSON-NEXT:   {
// JSON:          "waiter": 1,
// JSON-NEXT:     "wait": {
// JSON:            "line": 36,
// JSON:          "signaller": 0,
// JSON-NEXT:     "signal": {
// JSON:            "line": 57,
// SARIF: "text": "Deadlock: T0 blocked in join of {{.*}}; T1 blocked in wait of 'c' (observed in the recorded run{{.*}})"

// SLEEP-NOT:  observed
// SLEEP:      ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// SLEEP-NOT:  observed
// SLEEP:      exit=0
