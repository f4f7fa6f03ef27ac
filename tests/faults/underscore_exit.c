// `_exit` from a thread in the middle of a segment ends the run as `exit` would, though it runs no
// handler: its wrapper records the `exit` (after the exit grace: main is blocked in its join, which
// stays pending), flushes every thread and seals the trace, then the real `_exit` gives status 3.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d '' | FileCheck %s
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// CHECK:      status 3 3
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: {{$}}
// CHECK-NEXT: recorded files: ./trace {{$}}
// DUMP:       run binary={{.*}} end=exit threads=2
// DUMP:       T0 join T1 PENDING at {{.*}}underscore_exit.c:37:3 main
// DUMP:       T1 unlock m seq={{[0-9]+}} at {{.*}}underscore_exit.c:27:3 worker
// DUMP-NEXT:  T1 write before size=4 at {{.*}}underscore_exit.c:28:10 worker
// DUMP:       T1 write after size=16 at {{.*}}underscore_exit.c:30:14 worker
// DUMP-NEXT:  T1 exit seq={{[0-9]+}} at {{.*}}underscore_exit.c:31:3 worker
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

// DUMP-NOT:   {{.}}
// Sealed: every thread file is listed with its checksum, and no pending file is left.
// RUN: python3 -c 'import json, sys; m = json.load(open(sys.argv[1] + "/meta.json")); print(sorted(m["files"]), len(m["checksum"]))' %t.d/recorded/trace | FileCheck --check-prefix=SEALED %s
// RUN: sh -c 'ls %t.d/recorded/trace | grep -c pending; true' | FileCheck --check-prefix=NO-PENDING %s
// SEALED:     ['t0.trace', 't1.trace'] 16
// NO-PENDING: 0
