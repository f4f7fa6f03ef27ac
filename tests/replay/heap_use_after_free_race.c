// A use after free hidden by lock order: the reader takes the job pointer under the lock and reads
// the job after unlocking; main detaches the job under the lock and frees it after. In the
// recorded run main goes first (the unrecorded test barrier holds the reader back), the reader
// finds no job and reads nothing. Replayed with the reader's critical section first, it gets the
// job and its read is unordered with main's free: a data race on freed memory, reported with the
// free's site and the read's, whichever of the two runs first. The same with -static.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 1:2:unlock 0:1:lock 0:2:unlock > %t.json
// RUN: env UAF_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace \
// RUN:   bash -c '%t; echo "exit status $?"' 2>&1 | python3 %S/Inputs/sites.py %t | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.trace/replay-outcome.json
//
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace not %t.static
// RUN: %ilgen dump %t.strace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.strace 0:0:lock 0:1:unlock 0:2:fork 1:0:start 1:1:lock 1:2:unlock 0:3:lock 0:4:unlock > %t.static.json
// RUN: env UAF_REPLAY=1 ILGEN_OPTIONS=mode=replay:schedule=%t.static.json:trace_dir=%t.strace \
// RUN:   bash -c '%t.static; echo "exit status $?"' 2>&1 | python3 %S/Inputs/sites.py %t.static | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUTCOME < %t.strace/replay-outcome.json
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

struct job {
  int len;
};

struct job *job;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_first;
int replaying, seen;

void *reader(void *arg) {
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_mutex_lock(&m);
  struct job *j = job;
  pthread_mutex_unlock(&m);
  if (j)
    seen = j->len;
  return arg;
}

int main(void) {
  replaying = getenv("UAF_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&main_first, 2);
  job = malloc(sizeof *job);
  job->len = 7;
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  pthread_mutex_lock(&m);
  struct job *mine = job;
  job = NULL;
  pthread_mutex_unlock(&m);
  free(mine);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&main_first);
  pthread_join(t, NULL);
  return 5;
}

// RECORDED:     T0 free [[JOB:0x[0-9a-f]+]] size={{[0-9]+}} seq={{[0-9]+}} at {{.*}}.c:59:3 main
// RECORDED:     T1 start
// RECORDED-NOT: [[JOB]]
// RECORDED:     T1 end

// CHECK:      WARNING: ilgen: data race on freed memory
// CHECK-DAG:  {{Read|Previous read}} of size 4 at {{.*}} by thread T1:
// CHECK-DAG:  #0 site {{[0-9]+}} (heap_use_after_free_race.c:44)
// CHECK-DAG:  {{Free|Previous free}} of size {{[0-9]+}} at {{.*}} by thread T0:
// CHECK-DAG:  #0 site {{[0-9]+}} (heap_use_after_free_race.c:59)
// CHECK:      SUMMARY: ilgen: data race on freed memory
// CHECK:      exit status 5

// OUTCOME:      "result": "race",
// OUTCOME:      "free": true
