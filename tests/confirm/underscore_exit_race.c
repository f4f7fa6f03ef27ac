// Listing 1 (as in listing1_race.c) ending with `_exit(0)` after the join, as lbzip2 ends:
// `_exit` runs no exit handler, the runtime's neither, so its wrapper records main's `exit` and
// ends the trace (sealed, `end=exit`), and in a replay writes the outcome, before the real `_exit`.
// detect predicts the race on y, replays it and confirms it: the exact pair of lines, exit 66, and
// no replay failed.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: env UEXIT_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-1/replay-outcome.json
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
  replaying = getenv("UEXIT_REPLAY") != NULL;
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
  printf("y=%d\n", y);
  fflush(stdout);
  _exit(0);
}

// OUT: y=3

// DUMP:      run binary={{.*}} end=exit threads=2
// DUMP:      T0 join T1 seq={{[0-9]+}} at {{.*}}underscore_exit_race.c:50:3 main
// DUMP:      T0 exit seq={{[0-9]+}} at {{.*}}underscore_exit_race.c:53:3 main
// DUMP-NEXT: T1 thread parent=T0 child=0

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[Y:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 task /{{.*}}underscore_exit_race.c:32:4
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[Y]] by main thread:
// CHECK-NEXT:     #0 main /{{.*}}underscore_exit_race.c:42:4
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'y' of size 4 at 0x[[Y]].
// CHECK:      SUMMARY: ilgen: data race /{{.*}}underscore_exit_race.c:32 in task
// CHECK-NEXT: ==================
// CHECK-NEXT: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
// CHECK-NOT:  {{.}}

// The outcome the `_exit` wrapper wrote last: the race, the schedule followed to its end.
// OUTCOME:      "result": "race",
// OUTCOME-NEXT: "schedule_followed": true,
// OUTCOME-NEXT: "steps_done": [[N:[0-9]+]],
// OUTCOME-NEXT: "steps_total": [[N]],
