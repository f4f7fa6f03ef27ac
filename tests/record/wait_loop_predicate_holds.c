// A wait loop whose predicate already holds never calls pthread_cond_wait, yet the pass's loop
// markers still record that the thread waited for `ready` on `c` and found it set: the analysis
// needs them to order main's signal before the waiter leaves the loop.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;
pthread_t t;

void *waiter(void *arg) {
  pthread_mutex_lock(&m);
  while (!ready)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  // The waiter starts only now: `ready` is already set when it checks.
  pthread_create(&t, NULL, waiter, NULL);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:24:3 main
// CHECK-NEXT: T0 write ready size=4 at {{.*}}wait_loop_predicate_holds.c:25:{{[0-9]+}} main
// CHECK-NEXT: T0 signal c seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:26:3 main
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:27:3 main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:29:3 main
// CHECK-NEXT: T0 read t size=8 at {{.*}}wait_loop_predicate_holds.c:30:{{[0-9]+}} main
// CHECK-NEXT: T0 join T1 seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:30:3 main
// The loop markers carry the site of the loop (line 17) or of its wait call (line 18); no wait
// and no wake appear between them.
// CHECK:      T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 lock m seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:16:3 waiter
// CHECK-NEXT: T1 waitloop_enter c seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:{{17|18}}:{{[0-9]+}} waiter
// CHECK-NEXT: T1 read ready size=4 at {{.*}}wait_loop_predicate_holds.c:17:{{[0-9]+}} waiter
// CHECK-NEXT: T1 waitloop_exit c seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:{{17|18}}:{{[0-9]+}} waiter
// CHECK-NEXT: T1 unlock m seq={{[0-9]+}} at {{.*}}wait_loop_predicate_holds.c:19:3 waiter
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}
