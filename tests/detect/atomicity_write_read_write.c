// The paper's other pattern, an access-read-access with writes (write-read-write): a marked
// `reconfigure` sets `state` to BUSY in one critical section and back to IDLE in the next; a
// monitor reads `state` under the same lock. Recorded with the monitor last (the test barrier, no
// sync operation), `ilgen detect --atomicity` predicts the monitor's read between the two writes:
// it sees the intermediate BUSY.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --atomicity --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>

#include "ilgen_test.h"

enum { IDLE, BUSY };

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int state = IDLE;
int seen;
ilgen_test_barrier_t turn;

ILGEN_ATOMIC void reconfigure(void) {
  pthread_mutex_lock(&m);
  state = BUSY;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  state = IDLE;
  pthread_mutex_unlock(&m);
}

void *admin(void *arg) {
  reconfigure();
  __ilgen_testonly_barrier_wait(&turn);
  return arg;
}

void *monitor(void *arg) {
  __ilgen_testonly_barrier_wait(&turn);
  pthread_mutex_lock(&m);
  seen = state;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t a, b;
  __ilgen_testonly_barrier_init(&turn, 2);
  pthread_create(&a, NULL, admin, NULL);
  pthread_create(&b, NULL, monitor, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d\n", seen);
  return 0;
}

// CHECK:      ilgen: 1 candidate(s): 0 race(s), 0 deadlock(s), 1 atomicity violation(s)
// CHECK:      candidate 1: atomicity violation on state ({{0x[0-9a-f]+}}) (4 bytes), write-read-write (the other thread reads the block's intermediate value)
// CHECK-NEXT:   transaction of thread 1 begun at {{.*}}atomicity_write_read_write.c:23 in reconfigure
// CHECK-NEXT:   e1 write by thread 1 at {{.*}}atomicity_write_read_write.c:25 in reconfigure
// CHECK-NEXT:   f  read by thread 2 at {{.*}}atomicity_write_read_write.c:41 in monitor
// CHECK-NEXT:   e2 write by thread 1 at {{.*}}atomicity_write_read_write.c:28 in reconfigure
// CHECK:      exit=66
