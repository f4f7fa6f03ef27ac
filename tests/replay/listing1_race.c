// The paper's Listing 1 (Carril & Tichy 2015), recorded in the order that hides its race (main
// takes m first, forced by the test barrier), then replayed with the schedule that exposes it:
// fork(T0), start(T1), lock(T1, m), unlock(T1, m). Main's lock is not in the schedule, so it waits
// until the schedule is done; its second `y++` (line 53) and task's `y++` (line 43) are then
// unordered, and the online detector reports the race on the task's thread, every time.
//
// Under replay (LISTING1_REPLAY set) the test barrier, which is not a sync operation, only makes
// main's `y++` come first in real time, so that the same access is the second one in every run.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 1:2:unlock > %t.json
// RUN: env LISTING1_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t 2>&1 \
// RUN:   | python3 %S/Inputs/sites.py %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
//
// The same replay 20 times finds the same races, in the same order.
// RUN: bash -c 'for i in $(seq 20); do env LISTING1_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t 2>/dev/null; python3 %S/Inputs/findings.py %t.trace; done' \
// RUN:   | sort | uniq -c | FileCheck %s --check-prefix=REPEAT
//
// gdb stops in the report hook on the thread of the second access: the backtrace reaches task's y++.
// RUN: env LISTING1_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace \
// RUN:   gdb -q -batch -ex 'break __ilgen_report_hook' -ex run -ex bt %t 2>&1 | FileCheck %s --check-prefix=GDB
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int x, y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t order;
int replaying;

void *task(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("LISTING1_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&order, 2);
  y++;
  pthread_create(&t, NULL, task, NULL);
  y++;
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED:      T0 fork T1
// RECORDED:      T0 lock m seq=[[MAIN_LOCK:[0-9]+]]
// RECORDED:      T1 lock m seq=
// RECORDED-NOT:  seq=[[MAIN_LOCK]]{{$}}

// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[Y:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 site {{[0-9]+}} (listing1_race.c:43)
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[Y]] by thread T0:
// CHECK-NEXT:     #0 site {{[0-9]+}} (listing1_race.c:53)
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race site {{.*}}(listing1_race.c:43) (T1) vs site {{.*}}(listing1_race.c:53) (T0)
// CHECK-NEXT: ==================
// CHECK:      WARNING: ilgen: data race
// CHECK-NEXT:   Write of size 4 at 0x[[Y]] by thread T1:
// CHECK-NEXT:     #0 site {{[0-9]+}} (listing1_race.c:43)
// CHECK:        Previous write of size 4 at 0x[[Y]] by thread T0:
// CHECK-NEXT:     #0 site {{[0-9]+}} (listing1_race.c:53)
// CHECK-NOT:  WARNING

// OUTCOME:      "result": "race",
// OUTCOME-NEXT: "schedule_followed": true,
// OUTCOME-NEXT: "steps_done": 4,
// OUTCOME-NEXT: "steps_total": 4,

// REPEAT:     {{^ *}}20 race 4/4 Read:T1:[[R:[0-9]+]]/Write:T0:[[W:[0-9]+]] Write:T1:{{[0-9]+}}/Write:T0:[[W]]{{$}}
// REPEAT-NOT: {{.}}

// GDB:      Breakpoint 1, {{.*}}__ilgen_report_hook
// GDB:      in task {{.*}}listing1_race.c:43

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
