// Readers under a rwlock: main takes the write lock and sets the configuration before it creates
// the readers; three readers then take the read lock (at the same time, forced by the test
// barrier, which is not a sync event) and read it; main joins them and, under the write lock
// again, changes it. The readers' read locks overlap, which must not make ilgen predict a race
// between them (they only read) or with main's writes (fork and join order those).
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

#include "ilgen_test.h"

enum { READERS = 3 };

pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
int config[2];
int seen[READERS];
ilgen_test_barrier_t all_reading;

void *reader(void *arg) {
  int i = (int)(long)arg;
  pthread_rwlock_rdlock(&lock);
  __ilgen_testonly_barrier_wait(&all_reading);
  seen[i] = config[0] + config[1];
  pthread_rwlock_unlock(&lock);
  return NULL;
}

int main(void) {
  pthread_t t[READERS];
  __ilgen_testonly_barrier_init(&all_reading, READERS);
  pthread_rwlock_wrlock(&lock);
  config[0] = 1;
  config[1] = 2;
  pthread_rwlock_unlock(&lock);
  for (long i = 0; i < READERS; i++)
    pthread_create(&t[i], NULL, reader, (void *)i);
  for (int i = 0; i < READERS; i++)
    pthread_join(t[i], NULL);
  pthread_rwlock_wrlock(&lock);
  config[0] = seen[0] + seen[1] + seen[2];
  pthread_rwlock_unlock(&lock);
  return config[0] == 9 ? 0 : 1;
}

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 4 threads,
// config and seen are shared with a writer; fork and join order every pair.
// CHECK-NEXT:   shared objects: 5 (0 without a conflicting pair, 5 removed by happens-before, 0 by lockset, 0 left)
// CHECK-NOT:  candidate 1
// CHECK:      exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
