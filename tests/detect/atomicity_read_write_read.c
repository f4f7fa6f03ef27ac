// The paper's read-write-read pattern: a marked report reads `level` in two critical sections
// (to print it and then to log it), and a writer updates it. Recorded with the writer last (the
// test barrier, no sync operation), `ilgen detect --atomicity` predicts the writer's update
// between the report's two reads: the report sees two different levels.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int level = 1;
int shown, logged;
ilgen_test_barrier_t turn;

ILGEN_ATOMIC void report(void) {
  pthread_mutex_lock(&m);
  shown = level;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  logged = level;
  pthread_mutex_unlock(&m);
}

void *reporter(void *arg) {
  report();
  __ilgen_testonly_barrier_wait(&turn);
  return arg;
}

void *writer(void *arg) {
  __ilgen_testonly_barrier_wait(&turn);
  pthread_mutex_lock(&m);
  level = 2;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t a, b;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, reporter, NULL);
  pthread_create(&b, NULL, writer, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d %d\n", shown, logged);
  return 0;
}

// CHECK:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// CHECK:      candidate 1: atomicity violation on level ({{0x[0-9a-f]+}}) (4 bytes), read-write-read (the block reads two different values)
// CHECK-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_read_write_read.c:20 in report
// CHECK-NEXT:   e1 read by thread 1 at {{.*}}atomicity_read_write_read.c:22 in report
// CHECK-NEXT:   f  write by thread 2 at {{.*}}atomicity_read_write_read.c:38 in writer
// CHECK-NEXT:   e2 read by thread 1 at {{.*}}atomicity_read_write_read.c:25 in report
// CHECK:      exit=66
