// The predicted race of flag_branch_norace.c that replay refutes, in a program that ends with
// `_Exit(0)`: `_Exit` runs no exit handler, so its wrapper writes the replay's outcome before the
// real `_Exit`. Without that, every replay of the program ends "failed: the program exited with
// status 0 without a replay outcome". Here the replay follows the schedule to the program's end and
// finds nothing: no error, 0 failed, exit 0, in text, --stats and JSON; `ilgen replay` agrees.
// Under replay (BRANCH_REPLAY set) the test barrier is skipped.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect --show-all --stats %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen replay %t.trace:1; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int flag, data;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_first;
int replaying;

void *task(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_mutex_lock(&m);
  int ready = flag;
  pthread_mutex_unlock(&m);
  if (ready)
    data = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("BRANCH_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&main_first, 2);
  pthread_create(&t, NULL, task, NULL);
  data = 2;
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_join(t, NULL);
  _Exit(0);
}

// DUMP:      run binary={{.*}} end=exit threads=2
// DUMP:      T0 exit seq={{[0-9]+}} at {{.*}}underscore_exit_norace.c:48:3 main

// CHECK-NOT:  WARNING
// CHECK:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: candidate 1: race at /{{.*}}underscore_exit_norace.c:41 and /{{.*}}underscore_exit_norace.c:32: no error: the schedule was followed (4/4 steps) and no race or deadlock happened
// CHECK-NEXT: ilgen: analysis:
// CHECK:      ilgen: replay: 0 of 1 replay(s) diverged (divergence rate 0%)
// CHECK-NEXT: exit=0
// CHECK-NOT:  {{.}}

// EXIT0: exit=0
// JSON:      "no_error": 1,
// JSON-NEXT: "infeasible": 0,
// JSON-NEXT: "failed": 0,
// JSON:      "verdict": "no_error",

// REPLAY:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// REPLAY:      candidate 1: race at {{.*}}: no error: the schedule was followed (4/4 steps)
// REPLAY-NEXT: exit=0
