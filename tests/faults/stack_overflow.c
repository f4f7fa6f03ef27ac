// A stack overflow: the runtime's SIGSEGV handler runs on the thread's alternate signal stack, so
// it still flushes the last segment (the write of `marker`) and records how the run ended; the
// program dies of SIGSEGV as it does without ilgen.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d '' 'ulimit -s 1024' | FileCheck %s
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// CHECK:      status 139 139
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: {{$}}
// CHECK-NEXT: recorded files: ./trace {{$}}
// DUMP:       run binary={{.*}} end=signal 11 (SIGSEGV) threads=1
// DUMP:       T0 unlock m seq={{[0-9]+}}
// DUMP-NEXT:  T0 write marker size=4 at {{.*}}stack_overflow.c:{{[0-9]+}}:{{[0-9]+}} main
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int marker;

static int deeper(int n) {
  volatile char pad[512];
  pad[0] = (char)n;
  return deeper(n + 1) + pad[0];
}

int main(void) {
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  marker = 7;
  printf("about to overflow\n");
  fflush(stdout);
  return deeper(0);
}
