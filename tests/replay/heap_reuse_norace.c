// A block freed by one thread and handed by malloc to another is a new object: the accesses of
// the old one never race with the new one's. The worker writes its job and frees it; main (held
// back by the unrecorded test barrier) allocates a job of the same size, which glibc's single
// arena gives back at the same address (checked in the dump), and writes it. Nothing the runtime
// sees orders the two writes (the allocator's own lock does): without the reset of the shadow at
// allocation the replay would report them as a race.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start > %t.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
//
// The same with -static (malloc through --wrap; main first takes libgcc's object_mutex).
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace not %t.static
// RUN: %ilgen dump %t.strace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.strace 0:0:lock 0:1:unlock 0:2:fork 1:0:start > %t.static.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.static.json:trace_dir=%t.strace \
// RUN:   bash -c '%t.static; echo "exit status $?"' 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.strace/replay-outcome.json
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

// Larger than glibc's per-thread cache holds, and than any block freed before: a freed job goes
// back to the arena, and the next job takes its place.
struct job {
  int id;
  char data[64000];
};

// `allocated` keeps the worker alive until main has its job: the runtime frees the worker's
// state when it ends, and that memory must not be what main's malloc finds first.
ilgen_test_barrier_t freed, allocated;

void *worker(void *arg) {
  struct job *j = malloc(sizeof *j);
  j->id = 1;
  free(j);
  __ilgen_testonly_barrier_wait(&freed);
  __ilgen_testonly_barrier_wait(&allocated);
  return arg;
}

int main(void) {
  mallopt(M_ARENA_MAX, 1);
  __ilgen_testonly_barrier_init(&freed, 2);
  __ilgen_testonly_barrier_init(&allocated, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  __ilgen_testonly_barrier_wait(&freed);
  struct job *j = malloc(sizeof *j);
  __ilgen_testonly_barrier_wait(&allocated);
  j->id = 2;
  int id = j->id;
  free(j);
  pthread_join(t, NULL);
  return id == 2 ? 5 : 1;
}

// RECORDED:      T0 fork T1
// RECORDED:      T0 alloc [[JOB:0x[0-9a-f]+]] size=64008 {{.*}} main
// RECORDED-NEXT: T0 write [[JOB]] size=4 {{.*}} main
// RECORDED:      T1 start
// RECORDED:      T1 alloc [[JOB]] size=64008 {{.*}} worker
// RECORDED-NEXT: T1 write [[JOB]] size=4 {{.*}} worker
// RECORDED-NEXT: T1 free [[JOB]] size={{[0-9]+}} {{.*}} worker

// CHECK-NOT: WARNING
// CHECK:     exit status 5

// OUTCOME:      "result": "no_error",
// OUTCOME-NEXT: "schedule_followed": true,
// OUTCOME-NEXT: "steps_done": {{[0-9]+}},
// OUTCOME-NEXT: "steps_total": {{[0-9]+}},
// OUTCOME-NEXT: "races": [],
