// A thread that computes for longer than the runtime's step timeout (replay_timeout_ms, 2 s)
// between two sync operations is still followed: replay runs slower than the recording (xz's
// workers compress a block under the race detector for seconds, issue 18), so the watchdog counts
// the CPU time of the thread whose step is next as progress. Only up to 4 times the timeout: a
// thread that spins for a step that never comes still diverges.
//
// Recorded: worker computes nothing. Replayed (ILGEN_OPTIONS names mode=replay): worker uses 3 s
// of its own CPU time before its lock, the schedule's next step. Then it writes `data` after its
// unlock, which main reads after its own: a race, confirmed.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
//
// With SPIN set the replayed worker spins for good instead: the replay diverges at that step,
// once the worker has spun 4 x 2 s of CPU time. On a loaded machine that takes longer than the
// default replay timeout (30 s of wall time): the replay would fail, not diverge, so it gets more.
// RUN: env SPIN=1 sh -c '%ilgen detect --show-all --replay-timeout 300 %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=SPIN
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int data;
int replaying;

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

void *worker(void *arg) {
  if (replaying) {
    double until = getenv("SPIN") ? 1e9 : 3.0;
    while (cpu_seconds() < until) {
    }
  }
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  data = 1;
  return arg;
}

int main(void) {
  const char *options = getenv("ILGEN_OPTIONS");
  replaying = options && strstr(options, "mode=replay");
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  printf("data %d\n", data);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED: data {{[01]}}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 main /{{.*}}compute_between_steps_race.c:54
// CHECK-DAG:    #0 worker /{{.*}}compute_between_steps_race.c:43
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66

// SPIN:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// SPIN:      candidate 1: race at {{.*}}: infeasible: the schedule could not be followed: step {{[0-9]+}} (T1 operation #1 lock at {{.*}}) was not taken within 2000 ms: T1 did 1 sync operations and has not reached the next{{.*}}
// SPIN:      exit=0
