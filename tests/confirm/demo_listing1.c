// The paper's Listing 1 as `make demo` shows it: the race on y is hidden in the recorded run by
// timing alone (task is slow to start, so main takes m first and its unlock orders everything
// task does after it, exactly the run in which a happens-before detector such as TSan sees
// nothing). From that one run, ilgen predicts the schedule in which task takes m first, replays
// it, and confirms the race between task's `y++` and main's second `y++`.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | awk '/^T0 unlock m / { split($4, a, "="); unlock = a[2] } /^T1 lock m / { split($4, b, "="); lock = b[2] } END { print (unlock + 0 < lock + 0) ? "main first" : "task first" }' | FileCheck %s --check-prefix=ORDER
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <unistd.h>

int x, y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *task(void *arg) {
  usleep(200 * 1000); // a slow start: not a synchronization operation
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  y++;
  pthread_create(&t, NULL, task, NULL);
  y++;
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  pthread_join(t, NULL);
  return 0;
}

// The recorded run hid the race: main released m before task took it.
// ORDER: main first

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[Y:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 task /{{.*}}demo_listing1.c:22:4
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[Y]] by main thread:
// CHECK-NEXT:     #0 main /{{.*}}demo_listing1.c:30:4
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'y' of size 4 at 0x[[Y]].
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 fork T1 at /{{.*}}demo_listing1.c:29
// CHECK-NEXT:     2. T1 start
// CHECK-NEXT:     3. T1 lock 'm' at /{{.*}}demo_listing1.c:19
// CHECK-NEXT:     4. T1 unlock 'm' at /{{.*}}demo_listing1.c:21
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}demo_listing1.c:22 in task
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
