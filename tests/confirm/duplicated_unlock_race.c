// Two copies of one statement are one operation at the schedule gate: `task` unlocks `m` on one
// line in either branch (as an optimizer duplicates a loop's unlock into the two paths after
// it: memcached's lru_pull_tail at items.c:1232, two sites), the else branch when recorded and
// the then branch when replayed (ILGEN_OPTIONS names mode=replay). The two calls are two sites of
// one file, line and function; the unlock is the same for the schedule and the race detector, so
// the replay follows its schedule and confirms the race on `y` (task's write after its unlock,
// main's read after its own critical section). Before, every replay ended "step N expects T1
// operation #2 to be unlock at site A, but it is unlock at site B" (infeasible).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int y;
int replaying;

void *task(void *arg) {
  pthread_mutex_lock(&m);
  if (replaying) pthread_mutex_unlock(&m); else pthread_mutex_unlock(&m);
  y = 1;
  return arg;
}

int main(void) {
  const char *options = getenv("ILGEN_OPTIONS");
  replaying = options && strstr(options, "mode=replay");
  pthread_t t;
  pthread_create(&t, NULL, task, NULL);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  printf("y %d\n", y);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 task /{{.*}}duplicated_unlock_race.c:26
// CHECK-DAG:    #0 main /{{.*}}duplicated_unlock_race.c:37
// CHECK:        Location is global 'y' of size 4 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK:          {{[0-9]+}}. T1 unlock 'm' at /{{.*}}duplicated_unlock_race.c:25
// CHECK:      SUMMARY: ilgen: data race /{{.*}}duplicated_unlock_race.c:{{26|37}} in {{task|main}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
