// `-mllvm -ilgen-exclude=fun:GLOB` (an option the plugin registers) parses through `ilgen cc`:
// the excluded function's memory accesses are not recorded, its sync calls still are.
//
// RUN: %ilgen cc -g -O0 -mllvm -ilgen-exclude=fun:quiet_* -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int hidden, seen;

void quiet_helper(void) {
  pthread_mutex_lock(&m);
  hidden = 1;
  pthread_mutex_unlock(&m);
}

int main(void) {
  quiet_helper();
  seen = 2;
  return 0;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}exclude_option.c:13:3 quiet_helper
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}exclude_option.c:15:3 quiet_helper
// CHECK-NEXT: T0 write seen size=4 at {{.*}}exclude_option.c:20:{{[0-9]+}} main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exclude_option.c:21:3 main
// CHECK-NOT: {{.}}
