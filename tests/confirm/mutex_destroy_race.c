// A mutex destroyed while a worker may still be unlocking it (as a thread pool that polls a
// counter before tearing down its queue does): the worker posts `locked` while it holds m (so its
// lock comes before the destroy in every order), unlocks m and then lets main go through a
// handshake the model does not see (the unrecorded test barrier); main destroys m. Nothing orders
// the unlock with the destroy: `ilgen detect` treats every operation on a destroyed mutex as an
// atomic read of it and the destroy as a write, predicts the pair and the replay confirms it,
// naming the destroy's line and the unlock's. Compiled with -DJOIN_FIRST, main joins the
// worker before destroying: nothing to report. With -DCOND, the object is a condition variable
// that the worker signals and main destroys: confirmed the same way.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -I %testinc -DJOIN_FIRST %s -o %t.join
// RUN: rm -rf %t.jtrace && env ILGEN_OPTIONS=trace_dir=%t.jtrace %t.join
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.jtrace; echo "exit=$?"' | FileCheck --check-prefix=JOIN %s
// RUN: %ilgen cc -g -O0 -I %testinc -DCOND %s -o %t.cond
// RUN: rm -rf %t.ctrace && env ILGEN_OPTIONS=trace_dir=%t.ctrace %t.cond
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.ctrace; echo "exit=$?"' | FileCheck --check-prefix=COND %s
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
sem_t locked;
ilgen_test_barrier_t worker_done;
int replaying, count;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  count++;
  sem_post(&locked);
#ifdef COND
  pthread_cond_signal(&c);
#endif
  pthread_mutex_unlock(&m);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  return arg;
}

int main(void) {
  replaying = getenv("DESTROY_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&worker_done, 2);
  sem_init(&locked, 0, 0);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  sem_wait(&locked);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
#ifdef JOIN_FIRST
  pthread_join(t, NULL);
#endif
#ifdef COND
  pthread_cond_destroy(&c);
#else
  pthread_mutex_destroy(&m);
#endif
#ifndef JOIN_FIRST
  pthread_join(t, NULL);
#endif
  return 0;
}

// DUMP:       T0 mutex_destroy m seq={{[0-9]+}} at {{.*}}mutex_destroy_race.c:61:3 main
// DUMP:       T1 unlock m seq={{[0-9]+}} at {{.*}}mutex_destroy_race.c:40:3 worker

// CHECK:      WARNING: ilgen: data race on destroyed sync object (pid={{[0-9]+}})
// CHECK-DAG:  {{Atomic read|Previous atomic read}} of size 1 at 0x[[M:[0-9a-f]+]] by thread T1:
// CHECK-DAG:  #0 worker /{{.*}}mutex_destroy_race.c:40:3
// CHECK-DAG:  {{Destroy|Previous destroy}} of size 1 at 0x[[M]] by main thread:
// CHECK-DAG:  #0 main /{{.*}}mutex_destroy_race.c:61:3
// CHECK:      Location is global 'm' of size 40 at 0x[[M]].
// CHECK:      SUMMARY: ilgen: data race on destroyed sync object /{{.*}}mutex_destroy_race.c:{{40|61}} in {{worker|main}}
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// JOIN-NOT:   WARNING
// JOIN:       ilgen: 0 candidate(s) replayed
// JOIN-NEXT:  ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// JOIN-NEXT:  exit=0

// COND:       WARNING: ilgen: data race on destroyed sync object (pid={{[0-9]+}})
// COND-DAG:   {{Atomic read|Previous atomic read}} of size 1 at 0x[[C:[0-9a-f]+]] by thread T1:
// COND-DAG:   #0 worker /{{.*}}mutex_destroy_race.c:38:3
// COND-DAG:   {{Destroy|Previous destroy}} of size 1 at 0x[[C]] by main thread:
// COND-DAG:   #0 main /{{.*}}mutex_destroy_race.c:59:3
// COND:       Location is global 'c' of size 48 at 0x[[C]].
// COND:       SUMMARY: ilgen: data race on destroyed sync object /{{.*}}mutex_destroy_race.c:{{38|59}} in {{worker|main}}
// COND:       ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// COND-NEXT:  exit=66

// The same three builds with -static (RUN lines here, below the code, so that its line numbers
// stay those of the checks above).
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | FileCheck --check-prefix=DUMP %s
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -static -I %testinc -DJOIN_FIRST %s -o %t.sjoin 2>/dev/null
// RUN: rm -rf %t.sjtrace && env ILGEN_OPTIONS=trace_dir=%t.sjtrace %t.sjoin
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.sjtrace; echo "exit=$?"' | FileCheck --check-prefix=JOIN %s
// RUN: %ilgen cc -g -O0 -static -I %testinc -DCOND %s -o %t.scond 2>/dev/null
// RUN: rm -rf %t.sctrace && env ILGEN_OPTIONS=trace_dir=%t.sctrace %t.scond
// RUN: env DESTROY_REPLAY=1 sh -c '%ilgen detect %t.sctrace; echo "exit=$?"' | FileCheck --check-prefix=COND %s
