// Schedules that cannot be followed end the replay as "diverged", with exit status 86 and the
// reason in the outcome, never as a deadlock of the program; a schedule made for another binary is
// refused before the program runs, with exit status 88.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
//
// T1's operation #1 is a lock; a schedule that says unlock diverges when T1 gets there.
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:unlock > %t.kind.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.kind.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: FileCheck %s --check-prefix=KIND-OUTCOME < %t.trace/replay-outcome.json
//
// A step no thread ever takes (T0 has no operation #9; its lock waits for the schedule to end).
// Every thread waits at the gate or in the program for a step after it: decided from that state,
// not by the clock (replay_timeout_ms, the last resort, is far away).
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 0:9:lock > %t.never.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.never.json:trace_dir=%t.trace:replay_timeout_ms=30000 \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=NEVER
// RUN: FileCheck %s --check-prefix=NEVER-OUTCOME < %t.trace/replay-outcome.json
//
// A schedule for another binary.
// RUN: python3 %S/Inputs/schedule.py %t.trace --build-id 0123456789abcdef 0:0:fork > %t.other.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.other.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=OTHER
//
// No schedule at all.
// RUN: env ILGEN_OPTIONS=mode=replay:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=NONE
#include <pthread.h>

int x;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *task(void *arg) {
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, task, NULL);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED: T1 start
// RECORDED-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// RECORDED-NEXT: T1 lock m

// KIND:      ilgen: replay diverged: step 2 expects T1 operation #1 to be unlock, but it is lock (site {{[0-9]+}}) (exit status 86)
// KIND-NEXT: exit status 86
// KIND-NOT:  WARNING
// KIND-OUTCOME:      "result": "diverged",
// KIND-OUTCOME-NEXT: "schedule_followed": false,
// KIND-OUTCOME-NEXT: "steps_done": 2,
// KIND-OUTCOME-NEXT: "steps_total": 3,
// KIND-OUTCOME:      "divergence": {
// KIND-OUTCOME-NEXT:   "step": 2,
// KIND-OUTCOME-NEXT:   "expected": {
// KIND-OUTCOME-NEXT:     "tid": 1,
// KIND-OUTCOME-NEXT:     "index": 1,
// KIND-OUTCOME-NEXT:     "op": "unlock",
// KIND-OUTCOME:        "got": {
// KIND-OUTCOME-NEXT:     "tid": 1,
// KIND-OUTCOME-NEXT:     "index": 1,
// KIND-OUTCOME-NEXT:     "op": "lock",

// NEVER:      ilgen: replay diverged: step 3 (T0 operation #9 lock at no site) cannot be taken: T0 waits at the gate before its operation #1 (exit status 86)
// NEVER-NEXT: exit status 86
// NEVER-OUTCOME:      "result": "diverged",
// NEVER-OUTCOME-NEXT: "schedule_followed": false,
// NEVER-OUTCOME-NEXT: "steps_done": 3,

// OTHER:      ilgen: schedule {{.*}}.other.json was made for another binary (build id 0123456789abcdef, this binary is {{[0-9a-f]+}}); record this binary again and run ilgen detect on its trace (exit status 88)
// OTHER-NEXT: exit status 88

// NONE:      ilgen: mode=replay needs schedule=PATH in ILGEN_OPTIONS (exit status 88)
// NONE-NEXT: exit status 88

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace

// The same kind at another site is another operation: a divergence at that step, naming both.
// RUN: python3 %S/Inputs/schedule.py %t.trace --recorded \
// RUN:   | python3 -c "import json,sys; s=json.load(sys.stdin); [t.update(site=999999) for t in s['steps'] if (t['tid'], t['index']) == (1, 1)]; json.dump(s, sys.stdout)" > %t.site.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.site.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s --check-prefix=SITE
// SITE:      ilgen: replay diverged: step {{[0-9]+}} expects T1 operation #1 to be lock at site 999999, but it is lock at site {{[0-9]+}} (exit status 86)
// SITE-NEXT: exit status 86
