// reads_from_link_norace.c with the race at the deciding read itself: the worker dequeues the
// first node under the lock but reads its `next` after unlocking, while main links the second
// node through it (the barrier lets the worker start once the first node is queued). Whichever
// write that read saw, keeping its writer before the end of the worker's segment must not hide
// the read's race: detect predicts it and its replay confirms it.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stddef.h>

#include "ilgen_test.h"

struct node {
  struct node *next;
};

static struct node first, second;
static struct node *head, *tail;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static ilgen_test_barrier_t queued;

static void push(struct node *n) {
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
  pthread_mutex_lock(&m);
  struct node *n = head;
  pthread_mutex_unlock(&m);
  struct node *after = n->next;
  pthread_mutex_lock(&m);
  head = after;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&queued, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  push(&first);
  __ilgen_testonly_barrier_wait(&queued);
  push(&second);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:  #0 worker {{.*}}reads_from_link_race.c:39
// CHECK-DAG:  #0 push {{.*}}reads_from_link_race.c:27
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66
