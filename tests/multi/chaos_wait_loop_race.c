// A race only predictable from a run whose wait loop waited: the worker bumps `late` only after it
// had to wait for `ready`, and main writes `late` without synchronization once it has signalled.
// In a run where main sets `ready` first (the usual order, main being ahead after the create),
// the loop exits without waiting, the worker's trace has no access to `late`, and no order of
// that run's sync operations shows the race. Five runs perturbed with fixed seeds (`--chaos=54`:
// seeds 54 to 58, four of which give the worker the higher priority; delays of up to 0.1 s, so
// that the load of the machine does not decide who goes first) include runs where the worker
// reaches the loop first and waits; detected together, the race is predicted there and confirmed
// by replay, and the finding's replay command replays it against its own run's trace.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.runs && env ILGEN_OPTIONS=chaos_delay_us=100000 %ilgen run --runs 5 --chaos=54 --out %t.runs -- %t
// RUN: sh -c '%ilgen detect %t.runs/run-0 %t.runs/run-1 %t.runs/run-2 %t.runs/run-3 %t.runs/run-4; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: grep -o 'ilgen replay [^ ]*:1' %t.text | sed 's|^ilgen replay |%ilgen replay |' > %t.replay.sh
// RUN: sh -c 'sh %t.replay.sh; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
//
// The same as JSON data: the run whose schedule is shown is the first that predicted it.
// RUN: sh -c '%ilgen detect --format json %t.runs/run-0 %t.runs/run-1 %t.runs/run-2 %t.runs/run-3 %t.runs/run-4 > %t.json; test $? = 66'
// RUN: python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["findings"]; print(len(f), f[0]["object"]["name"], f[0]["run"] == f[0]["runs"][0])' %t.json | FileCheck %s --check-prefix=JSON
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;
int late;

void *worker(void *arg) {
  int waited = 0;
  pthread_mutex_lock(&m);
  while (!ready) {
    waited = 1;
    pthread_cond_wait(&c, &m);
  }
  pthread_mutex_unlock(&m);
  if (waited)
    late++;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  late = 10;
  pthread_join(t, NULL);
  printf("late=%d\n", late);
  return 0;
}

// The replay reports the two accesses in the order they came, which the schedule leaves open.
// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:      #0 worker {{.*}}chaos_wait_loop_race.c:38:9
// CHECK-DAG:      #0 main {{.*}}chaos_wait_loop_race.c:49:8
// CHECK:        Location is global 'late' of size 4
// CHECK:        Predicted in run{{s?}} {{[1-5](, [2-5])*}} (of 5); replayed with run {{[1-5]}}'s schedule: ilgen replay {{.*}}.tmp.runs/run-{{[0-4]}}:1
// CHECK:      SUMMARY: ilgen: data race
// CHECK:      ilgen: run 1: {{.*}}.tmp.runs/run-0 (chaos seed 54)
// CHECK:      ilgen: run 5: {{.*}}.tmp.runs/run-4 (chaos seed 58)
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// JSON:       1 late True

// REPLAY:      WARNING: ilgen: data race
// REPLAY:      Location is global 'late' of size 4
// REPLAY:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s)
// REPLAY:      exit=66
