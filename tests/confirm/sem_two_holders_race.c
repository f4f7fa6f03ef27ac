// A semaphore is a counter (issue 12): initialised to 2 it admits two holders at once, and the
// two holders here write `shared`. The recorded run made them take it one after the other (the
// test barrier, which is no sync operation, holds the second back until the first posted), so
// the observed order alone would do with a count of 1 and show no race. The runtime records the
// count of sem_init (and of sem_open, -DNAMED), detect predicts both holding the semaphore at
// once and replay confirms the race between the two writes, also when the second holder takes it
// with sem_timedwait (-DTIMED). Initialised to 1, the same program has no race, and nothing is
// reported.
//
// The schedule has both threads take the semaphore before either posts it, and replay lets both
// through the real one. Under replay (SEM_REPLAY set) the test barrier only makes first's write
// come before second's in real time, while both hold it, so the report names the same access
// first.
//
// RUN: %ilgen cc -g -O0 -I %testinc -DCOUNT=2 %s -o %t2
// RUN: rm -rf %t2.trace && env ILGEN_OPTIONS=trace_dir=%t2.trace %t2
// RUN: %ilgen dump %t2.trace | FileCheck %s --check-prefix=DUMP
// RUN: env SEM_REPLAY=1 sh -c '%ilgen detect --stats %t2.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,WAIT,STATS
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t2.trace | FileCheck %s --check-prefix=AGREE1
//
// The second holder takes it with sem_timedwait: the same race.
// RUN: %ilgen cc -g -O0 -I %testinc -DCOUNT=2 -DTIMED %s -o %tt
// RUN: rm -rf %tt.trace && env ILGEN_OPTIONS=trace_dir=%tt.trace %tt
// RUN: %ilgen dump %tt.trace | FileCheck %s --check-prefix=DUMP-TIMED
// RUN: env SEM_REPLAY=1 sh -c '%ilgen detect %tt.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,TIMED
//
// The named semaphore: sem_open(O_CREAT, 2).
// RUN: %ilgen cc -g -O0 -I %testinc -DCOUNT=2 -DNAMED %s -o %tn
// RUN: rm -rf %tn.trace && env ILGEN_OPTIONS=trace_dir=%tn.trace %tn
// RUN: %ilgen dump %tn.trace | FileCheck %s --check-prefix=DUMP-NAMED
// RUN: env SEM_REPLAY=1 sh -c '%ilgen detect %tn.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,WAIT
//
// Count 1: the semaphore is a mutex, no candidate, exit 0; both solvers agree.
// RUN: %ilgen cc -g -O0 -I %testinc -DCOUNT=1 %s -o %t1
// RUN: rm -rf %t1.trace && env ILGEN_OPTIONS=trace_dir=%t1.trace %t1
// RUN: env SEM_REPLAY=1 sh -c '%ilgen detect --stats %t1.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NONE
// RUN: test ! -e %t1.trace/replay-1
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t1.trace | FileCheck %s --check-prefix=AGREE0
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ilgen_test.h"

int shared;
sem_t unnamed;
sem_t *s;
ilgen_test_barrier_t order;
int replaying;

void *first(void *arg) {
  sem_wait(s);
  shared = 1;
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  sem_post(s);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
  return arg;
}

void *second(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&order);
#ifdef TIMED
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 60;
  sem_timedwait(s, &deadline);
#else
  sem_wait(s);
#endif
  if (replaying)
    __ilgen_testonly_barrier_wait(&order);
  shared = 2;
  sem_post(s);
  return arg;
}

int main(void) {
  pthread_t a, b;
  replaying = getenv("SEM_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&order, 2);
#ifdef NAMED
  char name[64];
  snprintf(name, sizeof name, "/ilgen-sem-two-holders-%d", (int)getpid());
  s = sem_open(name, O_CREAT | O_EXCL, 0600, COUNT);
  if (s == SEM_FAILED) {
    perror("sem_open");
    return 1;
  }
  sem_unlink(name);
#else
  s = &unnamed;
  sem_init(s, 0, COUNT);
#endif
  pthread_create(&a, NULL, first, NULL);
  pthread_create(&b, NULL, second, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
#ifndef NAMED
  sem_destroy(s);
#endif
  return 0;
}

// DUMP:       T0 sem_init unnamed count=2 seq={{[0-9]+}} at {{.*}}sem_two_holders_race.c:99:3 main
// DUMP:       T0 sem_destroy unnamed seq={{[0-9]+}} at {{.*}}sem_two_holders_race.c:106:3 main
// DUMP-TIMED: T2 sem_timedwait unnamed acquired seq={{[0-9]+}} at {{.*}}sem_two_holders_race.c:73:3 second
// DUMP-NAMED: T0 sem_init 0x{{[0-9a-f]+}} count=2 seq={{[0-9]+}} at {{.*}}sem_two_holders_race.c:91:7 main

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 4 at 0x[[X:[0-9a-f]+]] by thread T2:
// CHECK-NEXT:     #0 second /{{.*}}sem_two_holders_race.c:79:10
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[X]] by thread T1:
// CHECK-NEXT:     #0 first /{{.*}}sem_two_holders_race.c:57:10
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'shared' of size 4 at 0x[[X]].
// CHECK:        Schedule that exposed it (candidate 1, replayed in {{.*}}):
// CHECK-DAG:    T1 sem_wait {{.*}}sem_two_holders_race.c:56
// WAIT-DAG:     T2 sem_wait {{.*}}sem_two_holders_race.c:75
// TIMED-DAG:    T2 sem_timedwait {{.*}}sem_two_holders_race.c:73
// CHECK-NOT:    sem_post
// CHECK:      SUMMARY: ilgen: data race /{{.*}}sem_two_holders_race.c:79 in second
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// STATS:        semaphores: 1 (1 with the recorded initial count, 0 inferred as the least the run needs: initialised outside instrumented code)
// CHECK:      exit=66

// NONE:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// NONE:        semaphores: 1 (1 with the recorded initial count, 0 inferred
// NONE:        ruled out by the exhaustive search: 1
// NONE:      exit=0

// AGREE1: solvers agree: 1 racy object(s), deadlock: no
// AGREE0: solvers agree: 0 racy object(s), deadlock: no
