// A lock-order inversion that the recorded run got through (the test barrier holds `other` back
// until main has released both locks), replayed with the schedule that deadlocks it: main takes a,
// other takes b, then each asks for the other's lock. Every live thread is then blocked in a
// program lock, so the watchdog reports the deadlock with both threads' blocked lock sites and the
// sites that acquired the locks they hold, writes the outcome and exits with 87.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 0:1:lock 1:1:lock 0:2:lock 1:2:lock > %t.json
// RUN: env DEADLOCK_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | python3 %S/Inputs/sites.py %t | FileCheck %s
// Both threads wait for a lock the other holds: the state proves the deadlock, so it is reported
// at once, long before deadlock_ms (the clock's last resort) would.
// RUN: env DEADLOCK_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace:deadlock_ms=30000 \
// RUN:   python3 %S/../Inputs/within.py 10 87 -- %t 2>&1 | python3 %S/Inputs/sites.py %t | FileCheck %s --check-prefix=STATE
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
//
// The same replay 20 times finds the same deadlock.
// RUN: bash -c 'for i in $(seq 20); do env DEADLOCK_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t 2>/dev/null; echo "exit status $?"; python3 %S/Inputs/findings.py %t.trace; done' \
// RUN:   | sort | uniq -c | FileCheck %s --check-prefix=REPEAT
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

// STATE:      WARNING: ilgen: deadlock (lock cycle) (pid={{[0-9]+}})
// STATE:      Cycle: T0 -> T1 -> T0

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: deadlock (lock cycle) (pid={{[0-9]+}})
// CHECK-NEXT:   Thread T0 is blocked in lock of 0x[[B:[0-9a-f]+]] at site {{[0-9]+}} (deadlock_lock_order.c:47), waiting for T1
// CHECK-NEXT:     T0 holds 0x[[A:[0-9a-f]+]], acquired at site {{[0-9]+}} (deadlock_lock_order.c:46)
// CHECK-NEXT:   Thread T1 is blocked in lock of 0x[[A]] at site {{[0-9]+}} (deadlock_lock_order.c:35), waiting for T0
// CHECK-NEXT:     T1 holds 0x[[B]], acquired at site {{[0-9]+}} (deadlock_lock_order.c:34)
// CHECK-NEXT:   Cycle: T0 -> T1 -> T0
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: deadlock T0 lock at site {{.*}}(deadlock_lock_order.c:47), T1 lock at site {{.*}}(deadlock_lock_order.c:35)
// CHECK-NEXT: ==================
// CHECK-NEXT: exit status 87

// REPEAT:     {{^ *}}20 deadlock 6/6 deadlock:T0@[[S0:[0-9]+]],T1@[[S1:[0-9]+]]{{$}}
// REPEAT-NEXT: {{^ *}}20 exit status 87
// REPEAT-NOT: {{.}}

// OUTCOME:      "result": "deadlock",
// OUTCOME-NEXT: "schedule_followed": true,
// OUTCOME:      "cycle": [
// OUTCOME-NEXT:   0,
// OUTCOME-NEXT:   1
// OUTCOME-NEXT: ]

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
