// A race whose schedule also sends the program down a path that never ends: in the order that
// exposes the race on y, task takes m before main does, sees x still 0, and after its racing
// `y++` spins forever (as a waiting loop whose condition the reordering never makes true). The
// recorded run (main takes m first, forced by the test barrier) ends. The replay writes the
// race, final and durable, the moment it is found; the program then completes no sync operation,
// so the runtime stops it after verdict_grace_ms (exit 89) instead of the replay timing out.
// `ilgen detect` confirms and reports the race, exit 66, well within the time limit below.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env SPIN_REPLAY=1 timeout 20 sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: FileCheck %s --check-prefix=STDERR < %t.trace/replay-1/stderr.txt
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-1/replay-outcome.json

#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

int x, y;
volatile int spin = 1;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t order;
int replaying;

void *task(void *arg) {
  int first;
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  pthread_mutex_lock(&m);
  first = x == 0;
  x++;
  pthread_mutex_unlock(&m);
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  y++;
  if (first)
    while (spin)
      ;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("SPIN_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&order, 2);
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

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x{{[0-9a-f]+}} by thread T1:
// CHECK-NEXT:     #0 task /{{.*}}race_then_spin.c:37:4
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x{{[0-9a-f]+}} by main thread:
// CHECK-NEXT:     #0 main /{{.*}}race_then_spin.c:49:4
// CHECK:      SUMMARY: ilgen: data race /{{.*}}race_then_spin.c:37 in task
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// STDERR: WARNING: ilgen: data race
// STDERR: ilgen: replay stopped: a race was confirmed and the program completed no sync operation for {{[0-9]+}} ms since (exit status 89)

// OUTCOME: "result": "race"
