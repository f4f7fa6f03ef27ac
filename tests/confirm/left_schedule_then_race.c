// A replay that cannot follow its schedule goes on unscheduled, and the races it meets after
// that are reported. task sets `done` with no lock when it has finished its two critical
// sections, and main reads it before joining: a race in every run, which detect predicts and
// its replay confirms. The same schedule made wrong by hand (one of its unlocks turned into a
// lock, so the replay cannot take that step) still confirms it now: the replay says where it
// left the schedule, the program goes on unscheduled with every thread free, and the detector
// meets the race (before, the replay ended at the divergence: no finding, exit 3). A replay that
// leaves its schedule and meets no race is still infeasible (flag_branch_norace.c: exit 3).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: rm -rf %t.broken && cp -r %t.trace %t.broken
// RUN: sed -i '0,/"op": "unlock"/s//"op": "lock"/' %t.broken/schedule-1.json
// RUN: sh -c '%ilgen replay %t.broken:1; echo "exit=$?"' | FileCheck %s --check-prefix=LEFT
// RUN: grep -h "left the schedule" %t.broken/replay-1/stderr.txt | FileCheck %s --check-prefix=STDERR
// RUN: sh -c '%ilgen replay --format json %t.broken:1 > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
#include <pthread.h>
#include <stdio.h>

int done;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, n = PTHREAD_MUTEX_INITIALIZER;

void *task(void *arg) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&n);
  pthread_mutex_unlock(&n);
  done = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, task, NULL);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  int seen = done;
  pthread_join(t, NULL);
  printf("done %d\n", seen);
  return 0;
}

// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:  #0 main {{.*}}left_schedule_then_race.c:40
// CHECK-DAG:  #0 task {{.*}}left_schedule_then_race.c:31
// CHECK:      Location is global 'done'
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66

// LEFT:       WARNING: ilgen: data race
// LEFT:       Location is global 'done'
// LEFT:       The replay left this schedule at step [[S:[0-9]+]] of 8 (step [[S]] expects T{{[01]}} operation #{{[0-9]+}} to be lock, but it is unlock (site {{[0-9]+}})); the threads ran unscheduled from there.
// LEFT:       exit=66
// STDERR:     ilgen: replay left the schedule: step {{[0-9]+}} expects T{{[01]}} operation #{{[0-9]+}} to be lock, but it is unlock (site {{[0-9]+}}); the program goes on unscheduled
// EXIT66:     exit=66
// VALID:      valid:
// JSON:       "left_schedule": "step [[S:[0-9]+]] of 8 (step [[S]] expects T{{[01]}} operation #{{[0-9]+}} to be lock, but it is unlock (site {{[0-9]+}}))"
