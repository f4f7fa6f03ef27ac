// A lock-order inversion that the recorded run got through (the test barrier holds `other` back
// until main has released both locks). `ilgen detect` predicts the deadlock, replays it, and the
// replay reaches it: the report names both blocked lock sites, the locks each thread holds with
// the sites that acquired them, and the cycle; exit 66. Under replay (DEADLOCK_REPLAY set) the
// barrier is skipped, as in tests/replay/deadlock_lock_order.c.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
//
// The same 20 times: the same deadlock every time.
// RUN: bash -c 'for i in $(seq 20); do out=$(env DEADLOCK_REPLAY=1 %ilgen detect %t.trace); echo "exit=$?"; echo "$out" | grep -E "^(WARNING|SUMMARY|  [A-Z].* is blocked)" | %S/Inputs/normalize.sh | tr "\n" "|"; echo; done' \
// RUN:   | env LC_ALL=C sort | uniq -c | FileCheck %s --check-prefix=REPEAT
//
// JSON and SARIF 2.1.0, validated against their schemas.
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect --format json %t.trace > %t.json; test $? = 66'
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=JSON-VALID
// RUN: env DEADLOCK_REPLAY=1 sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; test $? = 66'
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=SARIF-VALID
// RUN: python3 %S/Inputs/sarif_summary.py %t.sarif | FileCheck %s --check-prefix=SARIF
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_done;
int replaying;

void *other(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_done);
  pthread_mutex_lock(&b);
  pthread_mutex_lock(&a);
  pthread_mutex_unlock(&a);
  pthread_mutex_unlock(&b);
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("DEADLOCK_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&main_done, 2);
  pthread_create(&t, NULL, other, NULL);
  pthread_mutex_lock(&a);
  pthread_mutex_lock(&b);
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_done);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: lock-order-inversion (deadlock) (pid={{[0-9]+}})
// CHECK-NEXT:   Cycle of threads waiting for locks: main thread => thread T1 => main thread
// CHECK-EMPTY:
// CHECK-NEXT:   Main thread is blocked in lock of 'b' (0x[[B:[0-9a-f]+]]), held by thread T1:
// CHECK-NEXT:     #0 main /{{.*}}deadlock_lock_order.c:47:3
// CHECK-NEXT:     holding 'a' (0x[[A:[0-9a-f]+]]), acquired at:
// CHECK-NEXT:       #0 main /{{.*}}deadlock_lock_order.c:46:3
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 is blocked in lock of 'a' (0x[[A]]), held by main thread:
// CHECK-NEXT:     #0 other /{{.*}}deadlock_lock_order.c:35:3
// CHECK-NEXT:     holding 'b' (0x[[B]]), acquired at:
// CHECK-NEXT:       #0 other /{{.*}}deadlock_lock_order.c:34:3
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 (tid=1) created by main thread at:
// CHECK-NEXT:     #0 main /{{.*}}deadlock_lock_order.c:45:3
// CHECK-EMPTY:
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 fork T1 at /{{.*}}deadlock_lock_order.c:45
// Whether T1 started before main took a depends on the recorded run: the schedule keeps it.
// CHECK-DAG:      {{[23]}}. T0 lock 'a' at /{{.*}}deadlock_lock_order.c:46
// CHECK-DAG:      {{[23]}}. T1 start
// CHECK-NEXT:     4. T1 lock 'b' at /{{.*}}deadlock_lock_order.c:34
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: lock-order-inversion /{{.*}}deadlock_lock_order.c:47 in main
// CHECK-NEXT: ==================
// CHECK-NEXT: ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 1 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
// CHECK-NOT:  {{.}}

// REPEAT:      {{^ *}}20 WARNING: ilgen: lock-order-inversion (deadlock) (pid=PID)|  Main thread is blocked in lock of 'b' (0xADDR), held by thread T1:|  Thread T1 is blocked in lock of 'a' (0xADDR), held by main thread:|SUMMARY: ilgen: lock-order-inversion /{{.*}}deadlock_lock_order.c:47 in main|{{$}}
// REPEAT-NEXT: {{^ *}}20 exit=66{{$}}
// REPEAT-NOT:  {{.}}

// JSON-VALID: valid: ilgen report, format version 11
// SARIF-VALID: valid: Static Analysis Results Format (SARIF) Version 2.1.0-rtm.5 JSON Schema

// SARIF:      result ilgen/deadlock error deadlock_lock_order.c:47:3
// SARIF-NEXT:   related deadlock_lock_order.c:35:3 T1 blocked in lock of 'a'
// SARIF-NEXT:   related deadlock_lock_order.c:46:3 T0 acquired 'a' here
// SARIF-NEXT:   related deadlock_lock_order.c:34:3 T1 acquired 'b' here
// SARIF-NEXT:   flow T0:deadlock_lock_order.c:45:3@1 {{T0:deadlock_lock_order.c:46:3@2 T1:-@3|T1:-@2 T0:deadlock_lock_order.c:46:3@3}} T1:deadlock_lock_order.c:34:3@4 T0:deadlock_lock_order.c:47:3@5 T1:deadlock_lock_order.c:35:3@6
// SARIF-NOT:  result

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
