// A run killed by SIGTERM still leaves a complete trace: the runtime's handler flushes every
// thread's segment cache, records how the run ended, and re-raises the signal.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace not --crash %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int before_lock, in_lock;

int main(void) {
  before_lock = 1;
  pthread_mutex_lock(&m);
  in_lock = 2;
  kill(getpid(), SIGTERM);
  return 0;
}

// CHECK:      run binary={{.*}} end=signal 15 (SIGTERM) threads=1
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 write before_lock size=4 at {{.*}}killed_by_sigterm.c:15:{{[0-9]+}} main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}killed_by_sigterm.c:16:3 main
// CHECK-NEXT: T0 write in_lock size=4 at {{.*}}killed_by_sigterm.c:17:{{[0-9]+}} main
// CHECK-NOT: {{.}}
