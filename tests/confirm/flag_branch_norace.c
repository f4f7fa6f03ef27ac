// A predicted race that replay refutes: task writes `data` only when it sees `flag` set, and it
// reads `flag` under the same lock main sets it under. The recorded run (main first, forced by
// the test barrier) has task's write after main's, ordered through the lock. detect predicts the
// schedule in which task's critical section comes first, where both writes would be unordered; in
// that schedule task reads flag == 0 and never writes, so the replay follows the schedule and
// finds nothing: classified "no error", not reported, exit 0; --show-all lists it with the reason.
// Under replay (BRANCH_REPLAY set) the test barrier is skipped. --stats gives the run's replay
// divergence rate: 0 of 1 replays diverged.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICTED
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect --show-all --stats %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=ALL
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=VALID
// RUN: python3 %S/Inputs/sarif_summary.py %t.sarif | FileCheck %s --check-prefix=SARIF
//
// Without BRANCH_REPLAY task waits at the test barrier for main, which the schedule holds back
// (main's lock comes after the schedule's last step): an order the trace does not show. Once the
// schedule has not moved for a quarter of the step timeout, the gate lets main go, main reaches
// the barrier, and the schedule is followed: no error.
// RUN: sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=HELD
// With STUCK_REPLAY set, task sleeps for a minute before its step instead: the step is never
// taken, so the replay is infeasible (diverged), not reported; --stats: 1 of 1 replays diverged.
// RUN: env STUCK_REPLAY=1 sh -c '%ilgen detect --show-all --stats %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=STUCK
// With --replay-timeout 1 ilgen does not wait for the runtime's own 2 s: it kills the replay's
// process group after 1 s and counts the candidate as failed; no replayed process is left.
// RUN: env STUCK_REPLAY=1 sh -c '%ilgen detect --show-all --replay-timeout 1 %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=TIMEOUT
// RUN: sh -c 'pgrep -fx "%t" || echo "none left"' | FileCheck %s --check-prefix=GONE
//
// `ilgen replay` of the candidate: followed without error, exit 0.
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen replay %t.trace:1; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
// A schedule that the program cannot follow (T1's operation #2 is an unlock, not a lock): the
// replay diverges, `ilgen replay` says why and exits 3.
// RUN: rm -rf %t.broken && cp -r %t.trace %t.broken
// RUN: sed -i 's/"op": "unlock"/"op": "lock"/' %t.broken/schedule-1.json
// RUN: env BRANCH_REPLAY=1 sh -c '%ilgen replay %t.broken:1; echo "exit=$?"' | FileCheck %s --check-prefix=DIVERGED
// Bad FINDINGs are usage errors: exit 2.
// RUN: sh -c '%ilgen replay %t.trace:9; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=NO-CANDIDATE
// RUN: sh -c '%ilgen replay %t.trace:x; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=BAD-FINDING
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ilgen_test.h"

int flag, data;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_first;
int replaying, stuck;

void *task(void *arg) {
  if (stuck)
    sleep(60);
  else if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_mutex_lock(&m);
  int ready = flag;
  pthread_mutex_unlock(&m);
  if (ready)
    data = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  replaying = getenv("BRANCH_REPLAY") != NULL;
  stuck = getenv("STUCK_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&main_first, 2);
  pthread_create(&t, NULL, task, NULL);
  data = 2;
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_join(t, NULL);
  return 0;
}

// PREDICTED:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// PREDICTED:      candidate 1: data race on data
// PREDICTED-NEXT:   write by thread 0 at {{.*}}flag_branch_norace.c:75 in main
// PREDICTED-NEXT:   write by thread 1 at {{.*}}flag_branch_norace.c:65 in task
// PREDICTED:      exit=66

// CHECK-NOT:  WARNING
// CHECK:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: ilgen: 1 candidate(s) not confirmed; --show-all lists them with the reason
// CHECK-NEXT: exit=0
// CHECK-NOT:  {{.}}

// ALL-NOT:  WARNING
// ALL:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// ALL-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// ALL-NEXT: candidate 1: race at /{{.*}}flag_branch_norace.c:75 and /{{.*}}flag_branch_norace.c:65: no error: the schedule was followed (4/4 steps) and no race or deadlock happened
// ALL-NEXT: ilgen: analysis:
// ALL:      ilgen: replay: 0 of 1 replay(s) diverged (divergence rate 0%)
// ALL-NEXT: exit=0
// ALL-NOT:  {{.}}

// EXIT0: exit=0
// VALID: valid:
// JSON:      "findings": [],
// JSON-NEXT: "unconfirmed": [
// JSON-NEXT:   {
// JSON-NEXT:     "run": 1,
// JSON-NEXT:     "candidate": 1,
// JSON-NEXT:     "predicted": "race",
// JSON-NEXT:     "verdict": "no_error",
// JSON-NEXT:     "reason": "the schedule was followed (4/4 steps) and no race or deadlock happened",
// SARIF:      rule ilgen/deadlock
// SARIF-NOT:  result

// HELD-NOT:  WARNING
// HELD:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// HELD:      candidate 1: race at {{.*}}: no error: the schedule was followed (4/4 steps) and no race or deadlock happened
// HELD:      exit=0

// STUCK-NOT:  WARNING
// STUCK:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// STUCK:      candidate 1: race at {{.*}}: infeasible: the schedule could not be followed: step {{[0-9]+}} ({{.*}}) was not taken within 2000 ms{{.*}}
// STUCK-NEXT: ilgen: analysis:
// STUCK:      ilgen: replay: 1 of 1 replay(s) diverged (divergence rate 100%)
// STUCK-NEXT: exit=0

// TIMEOUT:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 1 failed
// TIMEOUT:      candidate 1: race at {{.*}}: replay failed: the replay did not end within --replay-timeout; its process group was killed
// TIMEOUT-NEXT: exit=0
// GONE: none left

// REPLAY:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// REPLAY:      candidate 1: race at {{.*}}: no error: the schedule was followed (4/4 steps)
// REPLAY-NEXT: exit=0

// DIVERGED:      ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 1 infeasible, 0 failed
// DIVERGED:      candidate 1: race at {{.*}}: infeasible: the schedule could not be followed: step 3 expects T1 operation #2 to be lock, but it is unlock (site {{[0-9]+}})
// DIVERGED-NEXT: exit=3

// NO-CANDIDATE: ilgen: error: {{.*}}candidates.json has 1 candidate(s), no candidate 9
// NO-CANDIDATE: exit=2
// BAD-FINDING: ilgen: error: bad FINDING `{{.*}}:x`: expected TRACE_DIR:N (candidate N of `ilgen detect` on TRACE_DIR) or N
// BAD-FINDING: exit=2

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
