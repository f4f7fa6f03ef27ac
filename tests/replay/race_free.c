// A race-free program replayed under a schedule that reorders its critical sections: the worker
// takes the lock before main, the reverse of the recorded run. Every access to `counter` is under
// the lock and `done` is read after the join, so the replay reports nothing and exits with the
// program's own status.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 1:2:unlock 0:1:lock 0:2:unlock > %t.json
// RUN: env NORACE_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --allow-empty
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int counter, done;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_first;
int replaying;

void *worker(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m);
  done = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("NORACE_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&main_first, 2);
  pthread_create(&t, NULL, worker, NULL);
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_join(t, NULL);
  return done + counter == 3 ? 5 : 1;
}

// RECORDED:     T0 lock m seq=[[MAIN:[0-9]+]]
// RECORDED:     T1 lock m

// CHECK-NOT: WARNING
// CHECK:     exit status 5
// CHECK-NOT: WARNING

// OUTCOME:      "result": "no_error",
// OUTCOME-NEXT: "schedule_followed": true,
// OUTCOME-NEXT: "steps_done": 6,
// OUTCOME-NEXT: "steps_total": 6,
// OUTCOME-NEXT: "races": [],
// OUTCOME-NEXT: "deadlock": null,
// OUTCOME-NEXT: "divergence": null

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
