// A race between two critical sections of different locks: the teller adds to the balance under
// `teller_lock`, main audits it under `audit_lock`, so neither lock orders the other. As TSan
// names the mutexes held at both accesses ("Mutex M1 acquired here"), the report shows each
// access `holding` its own lock, with the stack that acquired it: the earlier access's too, as it
// was when that access ran (main has released `audit_lock` by the time the race is found). JSON
// has them as each access's `locks`, SARIF as related locations and stacks.
//
// Main takes its lock before it creates the teller, and the unrecorded test barrier inside both
// critical sections makes main's access come first in real time, in the recorded run and in the
// replay: the same access is the second one in every run.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/sarif-2.1.0-rtm.5.json %t.sarif | FileCheck %s --check-prefix=SARIF-VALID
// RUN: FileCheck %s --check-prefix=SARIF < %t.sarif
#include <pthread.h>

#include "ilgen_test.h"

long balance;
pthread_mutex_t teller_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t audit_lock = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t order;

static void deposit(long amount) {
  pthread_mutex_lock(&teller_lock);
  __ilgen_testonly_barrier_wait(&order);
  balance += amount;
  pthread_mutex_unlock(&teller_lock);
}

void *teller(void *arg) {
  deposit(5);
  return arg;
}

static long audit(void) {
  long seen = balance;
  __ilgen_testonly_barrier_wait(&order);
  return seen;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&order, 2);
  pthread_mutex_lock(&audit_lock);
  pthread_create(&t, NULL, teller, NULL);
  long seen = audit();
  pthread_mutex_unlock(&audit_lock);
  pthread_join(t, NULL);
  return seen == 5;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 8 at 0x[[A:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 deposit /{{.*}}two_locks_race.c:33:11
// CHECK-NEXT:     #1 teller /{{.*}}two_locks_race.c:38:3
// CHECK-NEXT:     holding 'teller_lock' (0x{{[0-9a-f]+}}), acquired at:
// CHECK-NEXT:       #0 deposit /{{.*}}two_locks_race.c:31:3
// CHECK-NEXT:       #1 teller /{{.*}}two_locks_race.c:38:3
// CHECK-EMPTY:
// CHECK-NEXT:   Previous read of size 8 at 0x[[A]] by main thread:
// CHECK-NEXT:     #0 audit /{{.*}}two_locks_race.c:43:15
// CHECK-NEXT:     #1 main /{{.*}}two_locks_race.c:53:15
// CHECK-NEXT:     holding 'audit_lock' (0x{{[0-9a-f]+}}), acquired at:
// CHECK-NEXT:       #0 main /{{.*}}two_locks_race.c:51:3
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'balance' of size 8 at 0x[[A]].
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T1 (tid=1) created by main thread at:
// CHECK-NEXT:     #0 main /{{.*}}two_locks_race.c:52:3
// CHECK-EMPTY:
// CHECK-NEXT:   Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NEXT:     1. T0 lock 'audit_lock' at /{{.*}}two_locks_race.c:51
// CHECK-NEXT:     2. T0 fork T1 at /{{.*}}two_locks_race.c:52
// CHECK-NEXT:     3. T1 start
// CHECK-NEXT:     4. T1 lock 'teller_lock' at /{{.*}}two_locks_race.c:31
// CHECK-EMPTY:
// CHECK-NEXT: SUMMARY: ilgen: data race /{{.*}}two_locks_race.c:33 in deposit
// CHECK-NEXT: ==================
// CHECK-NEXT: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// EXIT66: exit=66
// VALID: valid: ilgen report, format version 11
// SARIF-VALID: valid: Static Analysis Results Format (SARIF) Version 2.1.0-rtm.5 JSON Schema

// JSON:      "current": {
// JSON:        "locks": [
// JSON-NEXT:     {
// JSON-NEXT:       "object": {{[0-9]+}},
// JSON-NEXT:       "object_name": {
// JSON-NEXT:         "name": "teller_lock",
// JSON:            "location": {
// JSON-NEXT:         "site": {{[0-9]+}},
// JSON-NEXT:         "file": "/{{.*}}two_locks_race.c",
// JSON-NEXT:         "line": 31,
// JSON:      "previous": {
// JSON:        "locks": [
// JSON-NEXT:     {
// JSON-NEXT:       "object": {{[0-9]+}},
// JSON-NEXT:       "object_name": {
// JSON-NEXT:         "name": "audit_lock",
// JSON:            "location": {
// JSON-NEXT:         "site": {{[0-9]+}},
// JSON-NEXT:         "file": "/{{.*}}two_locks_race.c",
// JSON-NEXT:         "line": 51,

// SARIF:      "relatedLocations": [
// SARIF:          "text": "'teller_lock' held by T1 at the write, acquired here"
// SARIF:            "startLine": 31
// SARIF:          "text": "'audit_lock' held by T0 at the previous read, acquired here"
// SARIF:            "startLine": 51
// SARIF:      "stacks": [
// SARIF:                  "startLine": 31
// SARIF:                  "startLine": 38
// SARIF:          "text": "'teller_lock' held by T1 at the write, acquired here"
// SARIF:                  "startLine": 51
// SARIF:          "text": "'audit_lock' held by T0 at the previous read, acquired here"
