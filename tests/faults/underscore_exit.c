// `_exit` from a thread in the middle of a segment runs no handler: the thread's accesses since
// its last sync operation are read from its pending slot, and the run reads as killed (main,
// blocked in its join, has no completed join record: it never returned).
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d '' | FileCheck %s
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// CHECK:      status 3 3
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: {{$}}
// CHECK-NEXT: recorded files: ./trace {{$}}
// DUMP:       run binary={{.*}} end=none (killed or still running) threads=2
// DUMP-NOT:   T0 join T1 seq=
// DUMP:       T1 unlock m seq={{[0-9]+}} at {{.*}}underscore_exit.c:27:3 worker
// DUMP-NEXT:  T1 write before size=4 at {{.*}}underscore_exit.c:28:10 worker
// DUMP:       T1 write after size=16 at {{.*}}underscore_exit.c:30:14 worker
// DUMP-NOT:   T1 end
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int before, after[4];

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  before = 1;
  for (int i = 0; i < 4; i++)
    after[i] = i;
  _exit(3);
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}
