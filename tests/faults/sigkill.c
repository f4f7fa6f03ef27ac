// SIGKILL runs nothing: the program dies with the same status, its trace still reads up to the
// last record written, and main's accesses since its last event (its current segment) are read
// from its pending slot: nothing recorded is lost.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d '' | FileCheck %s
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// CHECK:      status 137 137
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: {{$}}
// CHECK-NEXT: recorded files: ./trace {{$}}
// DUMP:       run binary={{.*}} end=none (killed or still running) threads=2
// DUMP:       T0 join T1 seq={{[0-9]+}}
// DUMP:       T1 write shared size=4
// DUMP-NEXT:  T1 unlock m seq={{[0-9]+}}
// DUMP-NEXT:  T1 end seq={{[0-9]+}}
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int shared;

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  shared = 1;
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  printf("shared %d\n", shared);
  fflush(stdout);
  shared = 2;
  kill(getpid(), SIGKILL);
  return 0;
}

// Main's last segment, after its heap event: the read of `stdout` and the write of `shared`.
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=LAST %s
// LAST:      T0 join T1 seq={{[0-9]+}}
// LAST:      T0 alloc {{.*}} seq={{[0-9]+}}
// LAST-NEXT: T0 read {{.*}} size=8 at {{.*}}sigkill.c:38:10 main
// LAST-NEXT: T0 write shared size=4 at {{.*}}sigkill.c:39:10 main
// LAST-NEXT: T1 thread parent=T0 child=0
