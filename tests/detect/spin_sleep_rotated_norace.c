// Workers count themselves in under a lock, then wait for each other in a sleeping spin on the
// count (relaxed atomic loads: no race on it). Main joins the first worker and reads the second's
// flag. The first worker cannot leave its loop before the second counted itself in, so the
// flag's write is over before main reads it: no schedule races them. At -O2 clang rotates the
// loop (`if (count != 2) do usleep(); while (count != 2);`) and the recorder keeps the test
// before the loop, the first round's read: the pass flags it as the spin's (before, it was a
// plain read, and a candidate put main's read before the flag's write; its replay spun until
// --replay-timeout). The test barrier (not recorded) makes the first worker count itself in first.
//
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "ilgen_test.h"

static int flag[2];
static atomic_int count;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static ilgen_test_barrier_t first_in;

static void *worker(void *arg) {
  long id = (long)arg;
  if (id == 1)
    __ilgen_testonly_barrier_wait(&first_in);
  flag[id] = 1;
  pthread_mutex_lock(&m);
  atomic_store_explicit(&count, atomic_load_explicit(&count, memory_order_relaxed) + 1,
                        memory_order_relaxed);
  pthread_mutex_unlock(&m);
  if (id == 0)
    __ilgen_testonly_barrier_wait(&first_in);
  while (atomic_load_explicit(&count, memory_order_relaxed) != 2)
    usleep(1000);
  return NULL;
}

int main(void) {
  __ilgen_testonly_barrier_init(&first_in, 2);
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  pthread_join(t[0], NULL);
  int seen = flag[1];
  pthread_join(t[1], NULL);
  return seen - 1;
}

// CHECK: ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK: exit=0
