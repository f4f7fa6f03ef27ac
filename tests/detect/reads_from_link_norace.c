// A deciding read of the raced object itself keeps its writer past its own segment. main queues
// two nodes, each under the lock (linking the second through `tail->next`); the worker, once main
// is done (a test-only barrier, not recorded), dequeues the first node under the lock, reading its
// `next` (a pointer: deciding), and then detaches the node outside the lock. A model of
// `first.next` that let the worker's read see another write anywhere would move the dequeue before
// main's link and predict the detach racing with the link: the worker would have read NULL, and
// main would then not link through `first` at all. detect keeps the link before the end of the
// dequeue: no candidate. reads_from_link_race.c keeps a race at the read itself.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
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
  head = n->next;
  if (!head)
    tail = NULL;
  pthread_mutex_unlock(&m);
  n->next = NULL;
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&queued, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  push(&first);
  push(&second);
  __ilgen_testonly_barrier_wait(&queued);
  pthread_join(t, NULL);
  return head == &second && first.next == NULL ? 0 : 1;
}

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK:      exit=0
