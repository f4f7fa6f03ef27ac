// A deciding read that the recorder merges into a later write of its segment keeps its writer.
// Two threads append a node each to a FIFO under its lock, `pool_submit` of app_tpool: `if
// (tail) tail->next = n; else head = n; tail = n;`. The read of `tail` decides where the link
// goes; the store `tail = n` of the same segment turns its recorded range into a write, so the
// trace shows the read only through that write, which the pass flags with what the read decided.
// main initializes its node outside the lock and appends it; the worker, once main is done (a
// test-only barrier, not recorded), appends its own, linking it through main's node. Without the
// worker's read of `tail` the model would move its append before main's and predict main's
// `n->next = NULL` racing with the worker's `tail->next = n`, which needs `tail` to be main's
// node. -O0 reads and writes `tail` in two blocks; -O2 in one (a select picks the link's address).
// reads_from_tail_race.c appends without the lock: that race is still confirmed.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t.o2
// RUN: rm -rf %t.o2.trace && env ILGEN_OPTIONS=trace_dir=%t.o2.trace %t.o2
// RUN: sh -c '%ilgen detect --no-replay %t.o2.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stddef.h>

#include "ilgen_test.h"

struct node {
  struct node *next;
  int value;
};

static struct node mine, theirs;
static struct node *head, *tail;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static ilgen_test_barrier_t queued;

static void append(struct node *n, int value) {
  n->next = NULL;
  n->value = value;
  pthread_mutex_lock(&m);
  if (tail)
    tail->next = n;
  else
    head = n;
  tail = n;
  pthread_mutex_unlock(&m);
}

static void *worker(void *arg) {
  __ilgen_testonly_barrier_wait(&queued);
  append(&theirs, 2);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&queued, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  append(&mine, 1);
  __ilgen_testonly_barrier_wait(&queued);
  pthread_join(t, NULL);
  return head == &mine && mine.next == &theirs && tail == &theirs ? 0 : 1;
}

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK:      exit=0
