// A race only predictable from a run where the detached worker gets going before main shuts down:
// the worker bumps `hits` only when it sees `shutting_down` still 0 (read under the lock), and
// main reads `hits` without synchronization on its way out. In a run where main takes the lock
// first (the usual order, main being ahead after the create), the worker, running in the exit
// grace, skips the increment: its trace has no access to race with, and no order of that run's
// sync operations can show one. Five runs perturbed with fixed seeds (`--chaos=54`: seeds 54 to
// 58, four of which give the worker the higher priority; delays of up to 0.1 s, so that the load
// of the machine does not decide who goes first) include runs where the worker runs first;
// detected together, the race is predicted there and confirmed by replay.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.runs && env ILGEN_OPTIONS=chaos_delay_us=100000 %ilgen run --runs 5 --chaos=54 --out %t.runs -- %t
// RUN: sh -c '%ilgen detect %t.runs/run-0 %t.runs/run-1 %t.runs/run-2 %t.runs/run-3 %t.runs/run-4; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int shutting_down;
int hits;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  int late = shutting_down;
  pthread_mutex_unlock(&m);
  if (!late)
    hits++;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_detach(t);
  pthread_mutex_lock(&m);
  shutting_down = 1;
  pthread_mutex_unlock(&m);
  printf("hits=%d\n", hits);
  return 0;
}

// The replay reports the two accesses in the order they came, which the schedule leaves open.
// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:      #0 worker {{.*}}chaos_worker_before_exit_race.c:26:9
// CHECK-DAG:      #0 main {{.*}}chaos_worker_before_exit_race.c:37:23
// CHECK:        Location is global 'hits' of size 4
// CHECK:        Predicted in run{{s?}} {{[1-5](, [2-5])*}} (of 5); replayed with run {{[1-5]}}'s schedule: ilgen replay {{.*}}.tmp.runs/run-{{[0-4]}}:1
// CHECK:      SUMMARY: ilgen: data race
// CHECK:      ilgen: run 1: {{.*}}.tmp.runs/run-0 (chaos seed 54)
// CHECK:      ilgen: run 5: {{.*}}.tmp.runs/run-4 (chaos seed 58)
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
