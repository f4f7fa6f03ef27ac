// A use after mremap: the worker takes the region pointer under the lock and reads the region
// after unlocking; main detaches the region under the lock and grows it with mremap after
// unlocking. The recorded run reads before the mremap (the unrecorded test barrier holds main
// back), but nothing orders the read with the mremap, which ends the old range (moved or not) and
// begins the new one: the dump shows the unmap of the old range and the map of the new one at the
// mremap's line, and the replay confirms a data race on unmapped memory (the old range) naming
// the mremap's line and the read's. The same with -static.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | awk -f %S/../detect/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: env UAM_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | awk -f %S/../detect/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: env UAM_REPLAY=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' | FileCheck %s
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "ilgen_test.h"

enum { SIZE = 1 << 16, GROWN = 1 << 20 };

int *region;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t worker_done;
int replaying, seen;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  int *r = region;
  pthread_mutex_unlock(&m);
  if (r)
    seen = r[100];
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  return arg;
}

int main(void) {
  replaying = getenv("UAM_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&worker_done, 2);
  region = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED)
    return 2;
  region[100] = 7;
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  pthread_mutex_lock(&m);
  int *mine = region;
  region = NULL;
  pthread_mutex_unlock(&m);
  int *grown = mremap(mine, SIZE, GROWN, MREMAP_MAYMOVE);
  if (grown == MAP_FAILED || grown[100] != 7)
    return 3;
  munmap(grown, GROWN);
  pthread_join(t, NULL);
  return 0;
}

// EVENTS:      1 T0 map size=1048576 line 57
// EVENTS-NEXT: 1 T0 map size=65536 line 45
// EVENTS-NEXT: 1 T0 unmap size=1048576 line 60
// EVENTS-NEXT: 1 T0 unmap size=65536 line 57

// CHECK:      WARNING: ilgen: data race on unmapped memory (pid={{[0-9]+}})
// CHECK-DAG:  {{Read|Previous read}} of size 4 at 0x{{[0-9a-f]+}} by thread T1:
// CHECK-DAG:  #0 worker /{{.*}}mmap_use_after_mremap_race.c:36:
// CHECK-DAG:  {{Unmap|Previous unmap}} of size 65536 at 0x{{[0-9a-f]+}} by main thread:
// CHECK-DAG:  #0 main /{{.*}}mmap_use_after_mremap_race.c:57:
// CHECK:      SUMMARY: ilgen: data race on unmapped memory /{{.*}}mmap_use_after_mremap_race.c:{{36|57}} in {{worker|main}}
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
