// A timed condition wait that timed out in the recording times out in the replay at its turn,
// without waiting for the real clock. main waits in `while (!done && !timed_out)` and nobody
// signals before its deadline; `setter` then sets `done` and writes `result` after its unlock,
// which main reads after the loop: a race.
//
// Recorded: the deadline is 50 ms away and the test barrier `over` holds `setter` until main
// left the loop, so the wait times out. Replayed (ILGEN_OPTIONS names mode=replay): the deadline
// is a minute away and `setter`'s steps come after main's wake in the schedule, so a real wait
// would sleep the whole minute. The recorded time-out is given at the wake's turn instead, and
// the race is confirmed at once.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect --replay-timeout 20 %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: FileCheck %s --check-prefix=REPLAYED < %t.trace/replay-1/stdout.txt
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
ilgen_test_barrier_t over;
int done;
int result;
int replaying;

void *setter(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&over);
  pthread_mutex_lock(&m);
  done = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  result = 1;
  return arg;
}

int main(void) {
  const char *options = getenv("ILGEN_OPTIONS");
  replaying = options && strstr(options, "mode=replay");
  __ilgen_testonly_barrier_init(&over, 2);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  if (replaying)
    deadline.tv_sec += 60;
  else
    deadline.tv_nsec += 50 * 1000 * 1000;
  if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000 * 1000 * 1000;
  }
  pthread_t t;
  pthread_mutex_lock(&m);
  pthread_create(&t, NULL, setter, NULL);
  int timed_out = 0;
  while (!done && !timed_out)
    timed_out = pthread_cond_timedwait(&c, &m, &deadline) != 0;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&over);
  printf("timed out %d result %d\n", timed_out, result);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED: timed out 1 result {{[01]}}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 setter /{{.*}}timedwait_timedout_race.c:39
// CHECK-DAG:    #0 main /{{.*}}timedwait_timedout_race.c:66
// CHECK:        Location is global 'result' of size 4 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK:          {{[0-9]+}}. T0 wait 'c' at /{{.*}}timedwait_timedout_race.c:62
// CHECK:          {{[0-9]+}}. T0 wake 'c' at /{{.*}}timedwait_timedout_race.c:62
// CHECK:          {{[0-9]+}}. T0 unlock 'm' at /{{.*}}timedwait_timedout_race.c:63
// CHECK-NEXT:     {{[0-9]+}}. T1 lock 'm' at /{{.*}}timedwait_timedout_race.c:35
// CHECK:      SUMMARY: ilgen: data race /{{.*}}timedwait_timedout_race.c:{{39|66}} in {{setter|main}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// REPLAYED: timed out 1 result {{[01]}}
