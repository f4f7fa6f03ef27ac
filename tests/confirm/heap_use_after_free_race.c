// A use after free: the worker takes the job pointer under the lock and reads the job after
// unlocking; main detaches the job under the lock and frees it after unlocking. The recorded run
// reads before the free (the unrecorded test barrier holds main back), but nothing orders the read
// with the free: `ilgen detect` keys the job's bytes by allocation epoch, treats the free as a
// write over the block, predicts the pair and the replay confirms a data race on freed memory
// naming the free's line and the read's. The same with -static, and compiled as C++, where the
// job is made with `new` and destroyed with `delete`.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env UAF_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: env UAF_REPLAY=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen c++ -x c++ -g -O0 -I %testinc %s -o %t.cxx
// RUN: rm -rf %t.cxxtrace && env ILGEN_OPTIONS=trace_dir=%t.cxxtrace %t.cxx
// RUN: env UAF_REPLAY=1 sh -c '%ilgen detect %t.cxxtrace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdlib.h>

#include "ilgen_test.h"

struct job {
  int len;
};

#ifdef __cplusplus
#define NEW_JOB() new struct job
#define DELETE_JOB(j) delete (j)
#else
#define NEW_JOB() malloc(sizeof(struct job))
#define DELETE_JOB(j) free(j)
#endif

struct job *job;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t worker_done;
int replaying, seen;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  struct job *j = job;
  pthread_mutex_unlock(&m);
  if (j)
    seen = j->len;
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  return arg;
}

int main(void) {
  replaying = getenv("UAF_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&worker_done, 2);
  job = NEW_JOB();
  job->len = 7;
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  pthread_mutex_lock(&m);
  struct job *mine = job;
  job = NULL;
  pthread_mutex_unlock(&m);
  DELETE_JOB(mine);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      WARNING: ilgen: data race on freed memory (pid={{[0-9]+}})
// CHECK-DAG:  {{Read|Previous read}} of size 4 at 0x[[J:[0-9a-f]+]] by thread T1:
// CHECK-DAG:  #0 {{worker|worker\(void\*\)}} /{{.*}}heap_use_after_free_race.c:45:
// CHECK-DAG:  {{Free|Previous free}} of size {{[0-9]+}} at 0x[[J]] by main thread:
// CHECK-DAG:  #0 main /{{.*}}heap_use_after_free_race.c:64:
// CHECK:      Location is heap block of size 4 at 0x[[J]] allocated by main thread at:
// CHECK-NEXT: #0 main /{{.*}}heap_use_after_free_race.c:54:
// CHECK:      SUMMARY: ilgen: data race on freed memory /{{.*}}heap_use_after_free_race.c:{{45|64}} in {{worker|worker\(void\*\)|main}}
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
