// pthread_once with two callers: whichever runs the initializer, the other one's return is
// ordered after it, so its read of what the initializer wrote is no race. Recorded with the worker
// calling first (the unrecorded test barrier holds main back) and with main first; `ilgen detect`
// confirms nothing in either: the model still lets the other caller take the once control first
// (it cannot know that caller would then run the initializer), and replaying that order makes it
// the initializer, which the lock orders the same way: no error. The dump shows the call as a critical section on the once
// control, the initializer's write inside it. The same with -static.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: env ONCE_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: rm -rf %t.main && env MAIN_FIRST=1 ILGEN_OPTIONS=trace_dir=%t.main %t
// RUN: env ONCE_REPLAY=1 sh -c '%ilgen detect %t.main; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: env ONCE_REPLAY=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_once_t once = PTHREAD_ONCE_INIT;
int table[4];
ilgen_test_barrier_t first_done;
int main_first, replaying, sum;

void init_table(void) {
  for (int i = 0; i < 4; i++)
    table[i] = i + 1;
}

void *worker(void *arg) {
  if (main_first && !replaying)
    __ilgen_testonly_barrier_wait(&first_done);
  pthread_once(&once, init_table);
  int *out = arg;
  *out = table[3];
  if (!main_first && !replaying)
    __ilgen_testonly_barrier_wait(&first_done);
  return NULL;
}

int main(void) {
  main_first = getenv("MAIN_FIRST") != NULL;
  replaying = getenv("ONCE_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&first_done, 2);
  int got = 0;
  pthread_t t;
  pthread_create(&t, NULL, worker, &got);
  if (!main_first && !replaying)
    __ilgen_testonly_barrier_wait(&first_done);
  pthread_once(&once, init_table);
  sum = table[0] + table[3];
  if (main_first && !replaying)
    __ilgen_testonly_barrier_wait(&first_done);
  pthread_join(t, NULL);
  return sum + got == 9 ? 0 : 1;
}

// DUMP:      T0 lock once seq={{[0-9]+}} at {{.*}}once_two_callers_norace.c:53:3 main
// DUMP-NEXT: T0 unlock once seq={{[0-9]+}} at {{.*}}once_two_callers_norace.c:53:3 main
// DUMP:      T1 lock once seq={{[0-9]+}} at {{.*}}once_two_callers_norace.c:36:3 worker
// DUMP-NEXT: T1 write table size=16 at {{.*}}once_two_callers_norace.c:30:{{[0-9]+}} init_table
// DUMP-NEXT: T1 unlock once seq={{[0-9]+}} at {{.*}}once_two_callers_norace.c:36:3 worker

// CHECK:      ilgen: {{[0-9]+}} candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), {{[0-9]+}} no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 0 finding(s) confirmed
// CHECK:      exit=0
