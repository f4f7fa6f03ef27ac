// The paper's Listing 1 recorded in the order that hides its race: main takes m first, so in the
// recorded run task's `y++` comes after main's. ilgen detect must predict the one schedule the
// paper gives: main forks task, task starts, locks and unlocks m (main has not taken it yet), and
// then main's `y++` (after the fork) and task's `y++` are both next: a race on y and nothing else
// (x is always under m; main's first `y++` is before the fork).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' > %t.text
// RUN: sh -c '%ilgen detect --no-replay --format json %t.trace; echo "exit=$?"' > %t.json
// RUN: cat %t.text %t.json | FileCheck %s
// RUN: test ! -e %t.trace/schedule-1.json && %ilgen replay --print-env %t.trace:1 >/dev/null && test -f %t.trace/schedule-1.json && test ! -e %t.trace/schedule-2.json
//
// Progress goes to stderr, only with --progress when stderr is no terminal; stdout is unchanged.
// RUN: sh -c '%ilgen detect --no-replay --progress %t.trace 2>%t.progress; echo "exit=$?"' > %t.text2
// RUN: diff %t.text %t.text2
// RUN: FileCheck --check-prefix=PROGRESS %s < %t.progress
// RUN: sh -c '%ilgen detect --no-replay %t.trace 2>&1 >/dev/null; true' | FileCheck --allow-empty --check-prefix=QUIET %s
//
// A reader that closed the pipe before the summary comes (`ilgen detect | head`) is no error and
// no panic: the exit code still reports the finding.
// RUN: sh -c '{ sleep 0.5; %ilgen detect --no-replay %t.trace; echo "exit=$?" >&2; } | true' 2>&1 | FileCheck --check-prefix=EPIPE %s
#include <pthread.h>

#include "ilgen_test.h"

int x, y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_locked_first;

void *task(void *arg) {
  __ilgen_testonly_barrier_wait(&main_locked_first);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&main_locked_first, 2);
  y++;
  pthread_create(&t, NULL, task, NULL);
  y++;
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&main_locked_first);
  pthread_join(t, NULL);
  return 0;
}

// The text summary; the site ids it shows are captured to check the JSON against.
// CHECK:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 2 threads, 9 sync events,
// CHECK:      candidate 1: data race on y (0x[[#%x,Y:]]) (4 bytes)
// CHECK-NEXT:   write by thread 0 at {{.*}}listing1_race.c:45 in main (site [[MAIN_Y:[0-9]+]])
// CHECK-NEXT:   write by thread 1 at {{.*}}listing1_race.c:36 in task (site [[TASK_Y:[0-9]+]])
// CHECK-NEXT:   schedule:
// CHECK-NEXT:     thread 0: fork thread 1 at {{.*}}listing1_race.c:44 in main (site [[FORK:[0-9]+]])
// CHECK-NEXT:     thread 1: start
// CHECK-NEXT:     thread 1: lock m (0x[[#%x,M:]]) at {{.*}}listing1_race.c:33 in task (site [[LOCK:[0-9]+]])
// CHECK-NEXT:     thread 1: unlock m (0x[[#%x,M]]) at {{.*}}listing1_race.c:35 in task (site [[UNLOCK:[0-9]+]])
// CHECK-NEXT: candidates written to {{.*}}.trace/candidates.json
// CHECK-NEXT: exit=66
//
// The same candidate as JSON (the candidates.json file).
// CHECK-NEXT: {
// CHECK-NEXT:   "format_version": 7,
// CHECK:        "candidates": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "kind": "race",
// CHECK-NEXT:       "object": {
// CHECK-NEXT:         "addr": [[#%u,Y]],
// CHECK-NEXT:         "len": 4
// CHECK-NEXT:       },
// CHECK-NEXT:       "accesses": [
// CHECK-NEXT:         {
// CHECK-NEXT:           "tid": 0,
// CHECK-NEXT:           "site": [[MAIN_Y]],
// CHECK-NEXT:           "access": "write"
// CHECK-NEXT:         },
// CHECK-NEXT:         {
// CHECK-NEXT:           "tid": 1,
// CHECK-NEXT:           "site": [[TASK_Y]],
// CHECK-NEXT:           "access": "write"
// CHECK-NEXT:         }
// CHECK-NEXT:       ],
// CHECK-NEXT:       "schedule": {
// CHECK-NEXT:         "prefix_steps": 0,
// The schedule above is the observed order up to main's first and task's third sync
// operation: written as those counts, the head, with no step listed after it.
// CHECK-NEXT:         "head": [
// CHECK-NEXT:           [
// CHECK-NEXT:             0,
// CHECK-NEXT:             1
// CHECK-NEXT:           ],
// CHECK-NEXT:           [
// CHECK-NEXT:             1,
// CHECK-NEXT:             3
// CHECK-NEXT:           ]
// CHECK-NEXT:         ],
// CHECK-NEXT:         "steps": []
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   ]
// CHECK-NEXT: }
// CHECK-NEXT: exit=66
// CHECK-NOT: {{.}}

// PROGRESS:      ilgen: detect: read 2 threads, {{[0-9]+}} events from {{.*}}.trace [{{[0-9.]+}}s]
// PROGRESS-NEXT: ilgen: detect: prepared 2 shared objects, 5 accesses kept [{{[0-9.]+}}s]
// PROGRESS-NEXT: ilgen: detect: filtered: 1 of 2 shared objects left, 1 race pairs [{{[0-9.]+}}s]
// PROGRESS-NEXT: ilgen: detect: solving: 0/2 jobs (shared variables and deadlocks), 0 window(s) searched, 0 candidate(s) [{{[0-9.]+}}s]
// The last solving line always appears, whatever came between.
// PROGRESS:      ilgen: detect: solving: 2/2 jobs (shared variables and deadlocks), {{[0-9]+}} window(s) searched, 1 candidate(s) [{{[0-9.]+}}s]
// PROGRESS-NEXT: ilgen: detect: done [{{[0-9.]+}}s]
// PROGRESS-NOT:  {{.}}
// On a terminal (script(1) gives the command one) a bar counts units (the variable y, deadlocks),
// windows and candidates, then replays, with the stage lines above it; --quiet shows nothing.
// RUN: script -qec '%ilgen detect %t.trace > /dev/null' /dev/null | tr '\r' '\n' | FileCheck --check-prefix=TTY %s
// RUN: script -qec '%ilgen detect --quiet %t.trace > /dev/null' /dev/null | count 0
// TTY: ilgen: detect: filtered: 1 of 2 shared objects left, 1 race pairs
// TTY: ilgen: detect: solving {{.*}} 2/2 units, {{[0-9]+}} window(s) searched, 1 candidate(s)
// TTY: ilgen: replaying candidate 1:
// TTY: ilgen: detect: replaying {{.*}} 0/1 candidate(s)
// TTY: ilgen: detect: replayed 1 candidate(s)
// QUIET-NOT: {{.}}
// EPIPE-NOT: {{.}}
// EPIPE:     exit=66
// EPIPE-NOT: {{.}}

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
