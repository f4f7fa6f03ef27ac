// The second access of a race is in the last segment of a thread the process killed with
// SIGKILL: main's `x = 2` comes after its last recorded event and nothing flushes it, but it is
// in main's pending slot, so detect still predicts the race with the worker's `x = 1` (the test
// barrier, which the trace never sees, only makes the worker write first).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace sh -c '%t; echo "status=$?"' | FileCheck --check-prefix=RUNS %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUNS:       status=137
// CHECK:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK:      candidate 1: data race on x (0x{{[0-9a-f]+}}) (4 bytes)
// CHECK-NEXT:   write by thread 0 at {{.*}}sigkill_last_segment_race.c:36 in main
// CHECK-NEXT:   write by thread 1 at {{.*}}sigkill_last_segment_race.c:25 in worker
// CHECK:      exit=66
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "ilgen_test.h"

int x;
ilgen_test_barrier_t written;

static void *worker(void *arg) {
  x = 1;
  __ilgen_testonly_barrier_wait(&written);
  pause();
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&written, 2);
  pthread_create(&t, NULL, worker, NULL);
  __ilgen_testonly_barrier_wait(&written);
  x = 2;
  kill(getpid(), SIGKILL);
  return 0;
}
