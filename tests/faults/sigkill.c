// SIGKILL runs nothing: the program dies with the same status, and its trace still reads up to
// the last record written (the current segment's accesses are lost, as documented; the lock and
// unlock records are there).
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
  kill(getpid(), SIGKILL);
  return 0;
}
