// The paper's Listing 1 (Carril & Tichy 2015): main and task both increment y without a lock
// (the race ilgen must predict) and x under mutex m. The test barrier, which the runtime does not
// record, makes main take m first, as in the paper's recorded run. `make demo` records this file.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

#include "ilgen_test.h"

int x, y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t main_locked_first;

void *task(void *arg) {
  __ilgen_testonly_barrier_wait(&main_locked_first);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  y++;
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&main_locked_first, 2);
  y++;
  pthread_create(&t, NULL, task, NULL);
  y++;
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  __ilgen_testonly_barrier_wait(&main_locked_first);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      run binary={{.*}}listing1.c.tmp pid={{[0-9]+}} argv=["{{.*}}listing1.c.tmp"] end=exit threads=2
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 write y size=4 at {{.*}}listing1.c:28:{{[0-9]+}} main
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}listing1.c:29:3 main
// CHECK-NEXT: T0 write y size=4 at {{.*}}listing1.c:30:{{[0-9]+}} main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}listing1.c:31:3 main
// CHECK-NEXT: T0 write x size=4 at {{.*}}listing1.c:32:{{[0-9]+}} main
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}listing1.c:33:3 main
// CHECK-NEXT: T0 join T1 seq={{[0-9]+}} at {{.*}}listing1.c:35:3 main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}listing1.c:36:3 main
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 lock m seq={{[0-9]+}} at {{.*}}listing1.c:18:3 task
// CHECK-NEXT: T1 write x size=4 at {{.*}}listing1.c:19:{{[0-9]+}} task
// CHECK-NEXT: T1 unlock m seq={{[0-9]+}} at {{.*}}listing1.c:20:3 task
// CHECK-NEXT: T1 write y size=4 at {{.*}}listing1.c:21:{{[0-9]+}} task
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NOT: {{.}}
