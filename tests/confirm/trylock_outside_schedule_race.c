// A try-lock that the replay makes where the recording made another operation (a timer callback
// that the slower replay runs once more: memcached's clock handler tries the hash table's
// maintenance lock once a second on main) takes its thread outside the schedule until it lets
// the lock go, instead of ending the replay. main ticks (`tick`: a try-lock of `maintenance` and
// its unlock) only when replayed (ILGEN_OPTIONS names mode=replay), between its two critical
// sections of `m`; `worker` writes `counter` after its critical section and main reads it after
// its second one: a race, whose schedule has main's second lock where the replay ticks. Before,
// every replay ended "step N expects T0 operation #3 to be lock, but it is trylock".
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: FileCheck %s --check-prefix=REPLAYED < %t.trace/replay-1/stdout.txt
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t maintenance = PTHREAD_MUTEX_INITIALIZER;
int counter;
int ticks;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  counter = 1;
  return arg;
}

static void tick(void) {
  if (pthread_mutex_trylock(&maintenance) == 0) {
    ticks++;
    pthread_mutex_unlock(&maintenance);
  }
}

int main(void) {
  const char *options = getenv("ILGEN_OPTIONS");
  int replaying = options && strstr(options, "mode=replay");
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  if (replaying)
    tick();
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  printf("counter %d ticks %d\n", counter, ticks);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED: counter {{[01]}} ticks 0

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 worker /{{.*}}trylock_outside_schedule_race.c:28
// CHECK-DAG:    #0 main /{{.*}}trylock_outside_schedule_race.c:50
// CHECK:        Location is global 'counter' of size 4 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK:          {{[0-9]+}}. T0 unlock 'm' at /{{.*}}trylock_outside_schedule_race.c:45
// CHECK-NEXT:     {{[0-9]+}}. T0 lock 'm' at /{{.*}}trylock_outside_schedule_race.c:48
// CHECK:      SUMMARY: ilgen: data race /{{.*}}trylock_outside_schedule_race.c:{{28|50}} in {{worker|main}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// The tick ran in the replay, outside the schedule.
// REPLAYED: counter {{[01]}} ticks 1
