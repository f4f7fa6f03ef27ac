// A race whose two accesses lie many windows apart. Windows (--window N: N sync events each)
// bound ONLY the exhaustive search: within a window it may reorder operations, before it the
// threads run in the observed order, so that search never brings together accesses of two
// different windows (the false negative documented in analysis/src/window.rs). The cut-based
// fast path works on the whole trace, whatever the window size, so a race it decides (like this
// Listing 1 variant, where task runs 20 critical sections on q between main's `y++` and its own)
// is found with --window 2 as with the default: the false negative remains only for race pairs
// the cut path leaves undecided ("undecided" in the solver line), here none; see
// window_false_negative.c for one it leaves undecided.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --no-replay --window 2 %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

#include "ilgen_test.h"

int x, y, w;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_locked_first;

void *task(void *arg) {
  __ilgen_testonly_barrier_wait(&main_locked_first);
  for (int i = 0; i < 20; i++) {
    pthread_mutex_lock(&q);
    w++;
    pthread_mutex_unlock(&q);
  }
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&main_locked_first, 2);
  pthread_create(&t, NULL, task, NULL);
  y++;
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&main_locked_first);
  pthread_join(t, NULL);
  return 0;
}

// 49 sync events: fork, main's lock and unlock of m, task's start, 40 operations on q, its lock
// and unlock of m, end, join, main's exit: with --window 2, main's `y++` (before seq 2) and task's (after seq
// 44) are 21 windows apart.
// CHECK:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 2 threads, 49 sync events,
// CHECK:        solver: race pairs by cuts: 1 witnessed, 0 ruled out, 0 undecided;
// CHECK-SAME:   exhaustive: 0 window(s)
// CHECK:      candidate 1: data race on y
// CHECK-NEXT:   write by thread 0 at {{.*}}window_boundary_race.c:42 in main
// CHECK-NEXT:   write by thread 1 at {{.*}}window_boundary_race.c:34 in task
// CHECK-NEXT:   schedule:
// CHECK-NEXT:     thread 0: fork thread 1
// CHECK-NEXT:     thread 1: start
// CHECK-COUNT-40: thread 1: {{(un)?}}lock q
// CHECK-NEXT:     thread 1: lock m
// CHECK-NEXT:     thread 1: unlock m
// CHECK-NEXT: candidates written to
// CHECK-NEXT: exit=66

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
