// A use after munmap: the worker takes the region pointer under the lock and reads the region after
// unlocking; main detaches the region under the lock and unmaps it after unlocking. The recorded
// run reads before the munmap (the unrecorded test barrier holds main back), but nothing orders the
// read with the munmap: `ilgen detect` keys the region's bytes by mapping epoch, treats the munmap
// as a write over the range, predicts the pair and the replay confirms a data race on unmapped
// memory naming the munmap's line and the read's. With UAM_LATE the worker sleeps before its read
// in the replay, so the munmap comes first: the replay reports at the read's hook, before the load,
// which then faults on the unmapped page; the report is written by then and detect confirms it all
// the same. The same with -static.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env UAM_REPLAY=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: env UAM_REPLAY=1 UAM_LATE=1 sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.late
// RUN: FileCheck %s < %t.late && FileCheck --check-prefix=LATE %s < %t.late
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: env UAM_REPLAY=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' | FileCheck %s
// RUN: env UAM_REPLAY=1 UAM_LATE=1 sh -c '%ilgen detect %t.strace; echo "exit=$?"' > %t.late
// RUN: FileCheck %s < %t.late && FileCheck --check-prefix=LATE %s < %t.late
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ilgen_test.h"

enum { SIZE = 1 << 16 };

int *region;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t worker_done;
int replaying, seen;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  int *r = region;
  pthread_mutex_unlock(&m);
  if (r && getenv("UAM_LATE"))
    usleep(200 * 1000);
  if (r)
    seen = r[100];
  if (!replaying)
    __ilgen_testonly_barrier_wait(&worker_done);
  return arg;
}

int main(void) {
  replaying = getenv("UAM_REPLAY") != NULL;
  __ilgen_testonly_barrier_init(&worker_done, 2);
  region = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
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
  munmap(mine, SIZE);
  pthread_join(t, NULL);
  return 0;
}

// CHECK:      WARNING: ilgen: data race on unmapped memory (pid={{[0-9]+}})
// CHECK-DAG:  {{Read|Previous read}} of size 4 at 0x[[R:[0-9a-f]+]] by thread T1:
// CHECK-DAG:  #0 worker /{{.*}}mmap_use_after_munmap_race.c:42:
// CHECK-DAG:  {{Unmap|Previous unmap}} of size 65536 at 0x{{[0-9a-f]+}} by main thread:
// CHECK-DAG:  #0 main /{{.*}}mmap_use_after_munmap_race.c:63:
// CHECK:      Location is not a global variable (heap, stack or thread-local)
// CHECK:      SUMMARY: ilgen: data race on unmapped memory /{{.*}}mmap_use_after_munmap_race.c:{{42|63}} in {{worker|main}}
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// The munmap came first in the replay: the read found the race (and then faulted).
// LATE:      WARNING: ilgen: data race on unmapped memory (pid={{[0-9]+}})
// LATE-NEXT: Read of size 4 at 0x{{[0-9a-f]+}} by thread T1:
// LATE:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// LATE-NEXT: exit=66
