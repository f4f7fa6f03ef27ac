// A race on a buffer written by snprintf: the writer formats into the global `status` without
// the lock, main reads it without the lock. The write is recorded as the bytes snprintf produced
// (tests/record/printf_ranges.c), so `ilgen detect` predicts the race and the replay confirms it
// at the snprintf line. The test barrier, which is not a sync operation, makes main's read come
// first in real time, in the recorded run and under replay, so the report is the same each time.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
//
// With both accesses under the lock (LOCKED) there is no race, and none is predicted.
// RUN: %ilgen cc -g -O0 -DLOCKED -I %testinc %s -o %t.locked
// RUN: rm -rf %t.ltrace && env ILGEN_OPTIONS=trace_dir=%t.ltrace %t.locked
// RUN: sh -c '%ilgen detect %t.ltrace; echo "exit=$?"' | FileCheck %s --check-prefix=LOCKED
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

#ifdef LOCKED
#define LOCK() pthread_mutex_lock(&m)
#define UNLOCK() pthread_mutex_unlock(&m)
#else
#define LOCK()
#define UNLOCK()
#endif

char status[32];
char seen;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t order;

void *writer(void *arg) {
  __ilgen_testonly_barrier_wait(&order);
  LOCK();
  snprintf(status, sizeof status, "count=%d", 42);
  UNLOCK();
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&order, 2);
  pthread_create(&t, NULL, writer, NULL);
  LOCK();
  seen = status[4];
  UNLOCK();
  __ilgen_testonly_barrier_wait(&order);
  pthread_join(t, NULL);
  return 0;
}

// snprintf wrote "count=42" and its NUL: 9 bytes from the start of `status`; main read byte 4.
// CHECK:      ==================
// CHECK-NEXT: WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 9 at 0x[[S:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 writer /{{.*}}snprintf_race.c:37:3
// CHECK-EMPTY:
// CHECK-NEXT:   Previous read of size 1 at 0x{{[0-9a-f]+}} by main thread:
// CHECK-NEXT:     #0 main /{{.*}}snprintf_race.c:47:10
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'status' of size 32 at 0x[[S]].
// CHECK:      SUMMARY: ilgen: data race /{{.*}}snprintf_race.c:37 in writer
// CHECK-NEXT: ==================
// CHECK-NEXT: ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
// CHECK-NOT:  {{.}}

// LOCKED:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// LOCKED-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// LOCKED-NEXT: exit=0
