// A race-free program: two workers add to a counter under a mutex, and main reads it after both
// joins. detect predicts no candidate, so nothing is replayed, nothing is reported, exit 0; the
// JSON and SARIF reports are valid and empty.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: test ! -e %t.trace/replay-1
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=VALID
// RUN: python3 %S/Inputs/sarif_summary.py %t.sarif | FileCheck %s --check-prefix=SARIF
#include <pthread.h>
#include <stdio.h>

long counter;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  for (int i = 0; i < 100; i++) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, NULL);
  pthread_create(&b, NULL, worker, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%ld\n", counter);
  return 0;
}

// CHECK:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=0
// CHECK-NOT:  {{.}}

// EXIT0: exit=0
// VALID: valid:
// JSON:      "candidates": 0,
// JSON:      "findings": [],
// JSON-NEXT: "unconfirmed": []
// SARIF:      version 2.1.0 runs 1
// SARIF:      rule ilgen/deadlock
// SARIF-NOT:  result

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
