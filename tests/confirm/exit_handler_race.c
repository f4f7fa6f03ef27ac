// An exit handler reads `data`, which a worker main never joined writes under a lock. The worker
// runs in the exit grace, before main's exit; the handler's read comes after it. In the model no
// thread steps after the exit, so the schedule's last step is main's exit (the worker having taken
// its lock before it), and the replay holds the exit until then: the race is confirmed. Both
// solvers agree on the trace.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' 2>/dev/null | FileCheck %s
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace | FileCheck %s --check-prefix=AGREE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int data;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  data = 1;
  pthread_mutex_unlock(&m);
  return arg;
}

void report(void) { printf("data=%d\n", data); }

int main(void) {
  pthread_t t;
  atexit(report);
  pthread_create(&t, NULL, worker, NULL);
  return 0;
}

// OUT: data=1

// RECORDED:      T0 fork T1 seq={{[0-9]+}} at {{.*}}exit_handler_race.c:31:3 main
// RECORDED-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exit_handler_race.c:32:3 main
// RECORDED-NEXT: T0 read data size=4 at {{.*}}exit_handler_race.c:26:41 report
// RECORDED:      T1 lock m seq={{[0-9]+}}
// RECORDED-NEXT: T1 write data size=4 at {{.*}}exit_handler_race.c:21:8 worker

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Read of size 4 at 0x[[A:[0-9a-f]+]] by main thread:
// CHECK-NEXT:     #0 report {{.*}}exit_handler_race.c:26:41
// CHECK-EMPTY:
// CHECK-NEXT:   Previous write of size 4 at 0x[[A]] by thread T1:
// CHECK-NEXT:     #0 worker {{.*}}exit_handler_race.c:21:8
// CHECK:        thread T1 was never joined (created at {{.*}}exit_handler_race.c:31)
// CHECK:        Schedule that exposed it (candidate 1, replayed in {{.*}}):
// CHECK-NEXT:     1. T0 fork T1 at {{.*}}exit_handler_race.c:31
// CHECK-NEXT:     2. T1 start
// CHECK-NEXT:     3. T1 lock 'm' at {{.*}}exit_handler_race.c:20
// CHECK-NEXT:     4. T0 exit at {{.*}}exit_handler_race.c:32
// CHECK-EMPTY:
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK:      exit=66

// AGREE: solvers agree: 1 racy object(s), deadlock: no
