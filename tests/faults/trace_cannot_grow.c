// A trace that cannot grow, because of `ulimit -f` below its size or a full disk (a 64 KiB tmpfs,
// mounted in a user and mount namespace of its own): the runtime stops recording the thread whose
// file cannot grow, marks the trace truncated, and the program runs on with its own output and
// exit status (no SIGXFSZ, no SIGBUS). The trace reads up to the cut, with a one-line warning; on
// the full disk the worker's file may not even be created (then the trace has main alone).
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d chunk_kb=4 'ulimit -f 100' | FileCheck %s
// RUN: FileCheck --check-prefix=STDERR %s < %t.d/recorded.err
// RUN: grep '"truncated": true' %t.d/recorded/trace/meta.json
// RUN: %ilgen dump %t.d/recorded/trace 2>&1 | FileCheck --check-prefix=DUMP %s
// CHECK:      status 3 3
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: ./own.txt
// CHECK-NEXT: recorded files: ./own.txt ./trace
// STDERR:     ilgen: failed to grow a thread trace file (file size limit or disk full); that thread's trace ends here
// DUMP:       ilgen: warning: {{.*}}trace is truncated (the runtime could not grow a thread file: file size limit or disk full); analysing what was recorded up to the cut
// DUMP-NEXT:  run binary={{.*}} end=exit threads={{[12]}}
// DUMP:       T0 write rows size=4000
//
// REQUIRES: tmpfs-mount
// RUN: rm -rf %t.disk && mkdir -p %t.disk/mnt
// Only the trace directory is on the small disk (a later trace_dir wins).
// RUN: unshare --map-root-user --mount sh -c 'mount -t tmpfs -o size=64k tmpfs %t.disk/mnt && sh %S/Inputs/unharmed.sh %t.plain %t %t.disk/w chunk_kb=4:trace_dir=%t.disk/mnt/trace && cp -r %t.disk/mnt/trace %t.disk/' | FileCheck --check-prefix=DISK %s
// RUN: FileCheck --check-prefix=STDERR %s < %t.disk/w/recorded.err
// RUN: grep '"truncated": true' %t.disk/trace/meta.json
// RUN: %ilgen dump %t.disk/trace 2>&1 | FileCheck --check-prefix=DUMP %s
// DISK:      status 3 3
// DISK-NEXT: output same
// DISK-NEXT: plain files: ./own.txt
// DISK-NEXT: recorded files: ./own.txt
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static char rows[4000][4000];
static int sum;

static void *worker(void *arg) {
  (void)arg;
  for (int i = 0; i < 4000; i++) {
    pthread_mutex_lock(&m);
    memset(rows[i], i & 0xff, sizeof rows[i]);
    sum += rows[i][0];
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

int main(void) {
  FILE *own = fopen("own.txt", "w");
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  worker(NULL);
  pthread_join(t, NULL);
  fprintf(own, "sum %d\n", sum);
  fclose(own);
  printf("sum %d\n", sum);
  return 3;
}
