// reads_from_tail_norace.c with the worker appending without the lock: its read of `tail`, which
// the recorder keeps only through its later write `tail = n`, races with main's `tail = n` under
// the lock. Keeping that read's writer (main's append) before the worker's segment must not hide
// the race: detect predicts it and its replay confirms it, at -O0 (read and write in two blocks)
// and at -O2 (in one). The worker's segment starts at a lock of its own before main appends (a
// second test-only barrier), so no run orders main's append before it: so is its link through
// main's node, `tail->next = n`, unordered with main's `n->next = NULL`, and confirmed too.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t.o2
// RUN: rm -rf %t.o2.trace && env ILGEN_OPTIONS=trace_dir=%t.o2.trace %t.o2
// RUN: sh -c '%ilgen detect %t.o2.trace; echo "exit=$?"' | FileCheck %s
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
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static ilgen_test_barrier_t started, queued;

static void link_node(struct node *n, int value) {
  n->next = NULL;
  n->value = value;
  if (tail)
    tail->next = n;
  else
    head = n;
  tail = n;
}

static void *worker(void *arg) {
  pthread_mutex_lock(&gate);
  pthread_mutex_unlock(&gate);
  __ilgen_testonly_barrier_wait(&started);
  __ilgen_testonly_barrier_wait(&queued);
  link_node(&theirs, 2);
  return arg;
}

int main(void) {
  __ilgen_testonly_barrier_init(&started, 2);
  __ilgen_testonly_barrier_init(&queued, 2);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  __ilgen_testonly_barrier_wait(&started);
  pthread_mutex_lock(&m);
  link_node(&mine, 1);
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&queued);
  pthread_join(t, NULL);
  return head == &mine && mine.next == &theirs && tail == &theirs ? 0 : 1;
}

// CHECK-DAG:  #0 link_node {{.*}}reads_from_tail_race.c:34:7
// CHECK-DAG:  #0 link_node {{.*}}reads_from_tail_race.c:38:8
// CHECK-DAG:  Location is global 'tail'
// CHECK-DAG:  SUMMARY: ilgen: data race {{.*}}reads_from_tail_race.c:{{34|38}} in link_node
// CHECK:      ilgen: 2 candidate(s) replayed: 2 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK:      exit=66
