// Listing 1 with three threads and nested locks: main and two tasks each update x under m and,
// inside that, z under n, and each increments y without any lock. The test barriers (not sync
// events) record the race-hiding order: main's critical section first, then task 1's, then
// task 2's, and every `y++` right after its own critical section. ilgen must still find the race
// on y; with --all-sites, one candidate for each of the three pairs of `y++` sites. x and z are
// always under their locks: no candidate for them.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --no-replay --all-sites %t.trace; echo "exit=$?"' | FileCheck --check-prefix=ALL %s
#include <pthread.h>

#include "ilgen_test.h"

int x, y, z;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t n = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t started1, started2, turn1, turn2;

static void update(void) {
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_lock(&n);
  z++;
  pthread_mutex_unlock(&n);
  pthread_mutex_unlock(&m);
}

void *task1(void *arg) {
  __ilgen_testonly_barrier_wait(&started1);
  __ilgen_testonly_barrier_wait(&turn1);
  update();
  y++;
  __ilgen_testonly_barrier_wait(&turn2);
  return arg;
}

void *task2(void *arg) {
  __ilgen_testonly_barrier_wait(&started2);
  __ilgen_testonly_barrier_wait(&turn2);
  update();
  y++;
  return arg;
}

int main(void) {
  pthread_t t1, t2;
  __ilgen_testonly_barrier_init(&started1, 2);
  __ilgen_testonly_barrier_init(&started2, 2);
  __ilgen_testonly_barrier_init(&turn1, 2);
  __ilgen_testonly_barrier_init(&turn2, 2);
  // Each task has started before main goes on: the observed order, which candidate schedules
  // keep where they can, is then the same in every run.
  pthread_create(&t1, NULL, task1, NULL);
  __ilgen_testonly_barrier_wait(&started1);
  pthread_create(&t2, NULL, task2, NULL);
  __ilgen_testonly_barrier_wait(&started2);
  update();
  y++;
  __ilgen_testonly_barrier_wait(&turn1);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return 0;
}

// By default one candidate per variable: the first pair, main's `y++` against task 1's, reached
// after main's own critical sections (they precede its `y++`) and task 1's.
// CHECK:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 3 threads, 21 sync events,
// CHECK-NEXT:   shared objects: 3 (0 without a conflicting pair, 0 removed by happens-before, 2 by lockset, 1 left)
// CHECK:      candidate 1: data race on y ({{0x[0-9a-f]+}}) (4 bytes)
// CHECK-NEXT:   write by thread 0 at {{.*}}listing1_three_threads_race.c:60 in main
// CHECK-NEXT:   write by thread 1 at {{.*}}listing1_three_threads_race.c:34 in task1
// CHECK-NEXT:   schedule:
// CHECK-NEXT:     thread 0: fork thread 1 at {{.*}}:55 in main
// CHECK-NEXT:     thread 1: start
// CHECK-NEXT:     thread 0: fork thread 2 at {{.*}}:57 in main
// CHECK-NEXT:     thread 0: lock m {{.*}}:22 in update
// CHECK-NEXT:     thread 0: lock n {{.*}}:24 in update
// CHECK-NEXT:     thread 0: unlock n {{.*}}:26 in update
// CHECK-NEXT:     thread 0: unlock m {{.*}}:27 in update
// CHECK-NEXT:     thread 1: lock m {{.*}}:22 in update
// CHECK-NEXT:     thread 1: lock n {{.*}}:24 in update
// CHECK-NEXT:     thread 1: unlock n {{.*}}:26 in update
// CHECK-NEXT:     thread 1: unlock m {{.*}}:27 in update
// CHECK-NEXT: candidates written to
// CHECK-NEXT: exit=66
//
// --all-sites: every pair of threads races on y. Tasks 1 and 2 meet with main's critical
// sections never run (the paper's reordering, with a third thread).
// ALL:      ilgen: 3 candidate(s): 3 race(s), 0 deadlock(s)
// ALL:      candidate 1: data race on y
// ALL-NEXT:   write by thread 0 at {{.*}}:60 in main
// ALL-NEXT:   write by thread 1 at {{.*}}:34 in task1
// ALL:      candidate 2: data race on y
// ALL-NEXT:   write by thread 0 at {{.*}}:60 in main
// ALL-NEXT:   write by thread 2 at {{.*}}:43 in task2
// ALL:      candidate 3: data race on y
// ALL-NEXT:   write by thread 1 at {{.*}}:34 in task1
// ALL-NEXT:   write by thread 2 at {{.*}}:43 in task2
// ALL-NEXT:   schedule:
// ALL-NEXT:     thread 0: fork thread 1
// ALL-NEXT:     thread 1: start
// ALL-NEXT:     thread 0: fork thread 2
// ALL-NEXT:     thread 2: start
// ALL-NEXT:     thread 1: lock m
// ALL-NEXT:     thread 1: lock n
// ALL-NEXT:     thread 1: unlock n
// ALL-NEXT:     thread 1: unlock m
// ALL-NEXT:     thread 2: lock m
// ALL-NEXT:     thread 2: lock n
// ALL-NEXT:     thread 2: unlock n
// ALL-NEXT:     thread 2: unlock m
// ALL-NEXT: candidates written to
// ALL-NEXT: exit=66

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
