// The windows' documented false negative (analysis/src/window.rs), shown on a real run. main
// writes x inside its critical section on m; task, after 20 critical sections on q, takes and
// releases m and then writes x with no lock. The race needs task's section on m to run BEFORE
// main's (then main's write is next while task's is next): a reversal of the observed order of
// critical sections, which the cut-based fast path does not try (its pair stays "undecided"), so
// only the exhaustive search finds it, and only inside one window. With the default window the
// whole run is one window: one race. With --window 4 main's write (before the 3rd sync event)
// and task's (after the 46th) lie in the first and the twelfth window; no window holds accesses
// to x of both threads, so none is searched (in task's window main would already hold m: the
// prefix runs in the observed order): no candidate, exit 0, the pair still counted undecided.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=WHOLE %s
// RUN: sh -c '%ilgen detect --no-replay --window 4 %t.trace; echo "exit=$?"' | FileCheck --check-prefix=SMALL %s
//
// The pair is not dropped silently: detect says a limit left it undecided, --show-all names it
// and the limit to raise, --stats counts it by reason. A state limit too small for the one
// window says so in the same way.
// RUN: sh -c '%ilgen detect --window 4 %t.trace; echo "exit=$?"' | FileCheck --check-prefix=HINT %s
// RUN: sh -c '%ilgen detect --window 4 --show-all --stats %t.trace; echo "exit=$?"' | FileCheck --check-prefix=LIMIT %s
// RUN: sh -c '%ilgen detect --max-states 5 --show-all --stats %t.trace; echo "exit=$?"' | FileCheck --check-prefix=STATES %s
#include <pthread.h>

#include "ilgen_test.h"

int x, w;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_wrote;

void *task(void *arg) {
  __ilgen_testonly_barrier_wait(&main_wrote);
  for (int i = 0; i < 20; i++) {
    pthread_mutex_lock(&q);
    w++;
    pthread_mutex_unlock(&q);
  }
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  x = 2;
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&main_wrote, 2);
  pthread_create(&t, NULL, task, NULL);
  pthread_mutex_lock(&m);
  x = 1;
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&main_wrote);
  pthread_join(t, NULL);
  return 0;
}

// WHOLE:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// WHOLE:        solver: race pairs by cuts: 0 witnessed, 0 ruled out, 1 undecided;
// WHOLE-SAME:   exhaustive: {{[1-9][0-9]*}} window(s)
// WHOLE:      candidate 1: data race on x
// WHOLE-NEXT:   write by thread 0 at {{.*}}window_false_negative.c:50 in main
// WHOLE-NEXT:   write by thread 1 at {{.*}}window_false_negative.c:41 in task
// WHOLE-NEXT:   schedule:
// task's section on m comes first, then main takes m (and is about to write x).
// WHOLE-NEXT:     thread 0: fork thread 1
// WHOLE-NEXT:     thread 1: start
// WHOLE-COUNT-40: thread 1: {{(un)?}}lock q
// WHOLE-NEXT:     thread 1: lock m
// WHOLE-NEXT:     thread 1: unlock m
// WHOLE-NEXT:     thread 0: lock m
// WHOLE-NEXT: candidates written to
// WHOLE-NEXT: exit=66
//
// SMALL:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// SMALL:        solver: race pairs by cuts: 0 witnessed, 0 ruled out, 1 undecided;
// SMALL-SAME:   exhaustive: 0 window(s)
// SMALL-NOT:  candidate 1
// SMALL:      not decided: 1 race pair(s) on x ({{.*}}), e.g. write by thread 0 at {{.*}}window_false_negative.c:50 in main {{.*}} and write by thread 1 at {{.*}}window_false_negative.c:41 in task {{.*}}: the exhaustive search covers one window of sync events at a time; raise --window (now 4)
// SMALL-NOT:  candidate 1
// SMALL:      exit=0

// HINT:      ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// HINT-NEXT: ilgen: 1 race pair(s) on 1 object(s) not decided (a limit stopped the search); --show-all lists them with the limit to raise
// HINT-NEXT: exit=0

// LIMIT:      ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// LIMIT-NEXT: not decided: 1 race pair(s) on x {{.*}}: the exhaustive search covers one window of sync events at a time; raise --window (now 4)
// LIMIT-NEXT: ilgen: analysis:
// LIMIT:        race pairs left without a candidate, by reason:
// LIMIT-NEXT:     ordered by happens-before (filter): 0
// LIMIT-NEXT:     a common lock (filter): 0
// LIMIT-NEXT:     ruled out by a cut: 0
// LIMIT-NEXT:     ruled out by the exhaustive search: 0
// LIMIT-NEXT:     their two sites already had a candidate: 0
// LIMIT-NEXT:     not tried: the object had its --max-per-var candidates: 0
// LIMIT-NEXT:     not decided: state limit (--max-states): 0
// LIMIT-NEXT:     not decided: window limit (--window): 1
// LIMIT-NEXT:   fallbacks: 0 race pair(s) kept as fallbacks of the candidate at their two sites
// LIMIT-NEXT:   findings without events of their model: 0
// LIMIT-NEXT: ilgen: replay: no candidate to replay
// LIMIT-NEXT: exit=0

// STATES:      not decided: 1 race pair(s) on x {{.*}}: the exhaustive search stopped at the state limit; raise --max-states (now 5)
// STATES:          not decided: state limit (--max-states): 1
// STATES-NEXT:     not decided: window limit (--window): 0
// STATES:      exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
