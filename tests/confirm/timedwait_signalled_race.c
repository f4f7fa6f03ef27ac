// A timed condition wait that the recording saw signalled stays signalled in the replay, however
// slow the replay is (xz's encoder, issue 18). main waits in `while (!done && !timed_out)`:
// `early` wakes it while `done` is still 0 (it waits again), `late` sets `done`, wakes it, and
// after its unlock writes `stat_`, which main reads after the loop: a race.
//
// Recorded: the deadline is a minute away and the test barrier `woken` holds `late` until main
// was woken once, so the recording has both wakes signalled. Replayed (ILGEN_OPTIONS names
// mode=replay): the deadline is 100 ms away and `early` sleeps 500 ms before it signals, so a
// replay left to the real clock times out the first wake, leaves the loop and diverges at the
// second wait. The recorded outcome is enforced instead: the race is confirmed every time.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: FileCheck %s --check-prefix=REPLAYED < %t.trace/replay-1/stdout.txt
// RUN: grep -q '"timed_out": false' %t.trace/schedule-1.json
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
ilgen_test_barrier_t woken;
int done;
int stat_;
int replaying;

void *early(void *arg) {
  if (replaying)
    usleep(500 * 1000);
  pthread_mutex_lock(&m);
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return arg;
}

void *late(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&woken);
  pthread_mutex_lock(&m);
  done = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  stat_ = 1;
  return arg;
}

int main(void) {
  const char *options = getenv("ILGEN_OPTIONS");
  replaying = options && strstr(options, "mode=replay");
  __ilgen_testonly_barrier_init(&woken, 2);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  if (replaying)
    deadline.tv_nsec += 100 * 1000 * 1000;
  else
    deadline.tv_sec += 60;
  if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
    deadline.tv_sec++;
    deadline.tv_nsec -= 1000 * 1000 * 1000;
  }
  pthread_t t1, t2;
  pthread_mutex_lock(&m);
  pthread_create(&t1, NULL, early, NULL);
  pthread_create(&t2, NULL, late, NULL);
  int timed_out = 0, wakes = 0;
  while (!done && !timed_out) {
    timed_out = pthread_cond_timedwait(&c, &m, &deadline) != 0;
    if (++wakes == 1 && !replaying)
      __ilgen_testonly_barrier_wait(&woken);
  }
  pthread_mutex_unlock(&m);
  printf("wakes %d timed out %d stat %d\n", wakes, timed_out, stat_);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return 0;
}

// RECORDED: wakes 2 timed out 0 stat {{[01]}}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 main /{{.*}}timedwait_signalled_race.c:79
// CHECK-DAG:    #0 late /{{.*}}timedwait_signalled_race.c:50
// CHECK:        Location is global 'stat_' of size 4 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK:          {{[0-9]+}}. T0 wait 'c' at /{{.*}}timedwait_signalled_race.c:74
// CHECK:          {{[0-9]+}}. T1 signal 'c' at /{{.*}}timedwait_signalled_race.c:38
// CHECK:          {{[0-9]+}}. T0 wake 'c' at /{{.*}}timedwait_signalled_race.c:74
// CHECK:          {{[0-9]+}}. T0 wait 'c' at /{{.*}}timedwait_signalled_race.c:74
// CHECK:          {{[0-9]+}}. T2 signal 'c' at /{{.*}}timedwait_signalled_race.c:48
// CHECK:          {{[0-9]+}}. T0 wake 'c' at /{{.*}}timedwait_signalled_race.c:74
// CHECK:      SUMMARY: ilgen: data race /{{.*}}timedwait_signalled_race.c:{{79|50}} in {{main|late}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// The replayed program saw both wakes signalled, `early`'s after its deadline had passed.
// REPLAYED: wakes 2 timed out 0 stat {{[01]}}
