// A loop reading one byte at a stride of 2 (a Boyer-Moore skip loop's shape) leaves a gap after
// every read, so no two reads merge into a range; the segment cache keeps them as windows of 64
// bytes with a mask of the bytes read, one record each (trace format 6). `ilgen dump` expands
// them: the 2048 reads, each of 1 byte at its own offset and in order, exactly what one record per
// read gave; the thread file takes under 1000 bytes where those took over 6000. The skipped
// bytes stay unclaimed: main's write of text[3] races with nothing, its write of text[6] with
// the read of it.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | awk '/^T1 read/ { want = n ? "text+" 2 * n : "text"; if ($3 != want || $4 != "size=1") bad++; n++ } END { print "reads", n, "wrong", bad + 0 }' | FileCheck %s --check-prefix=READS
// RUN: sh -c 'wc -c < %t.trace/t1.trace' | FileCheck %s --check-prefix=SIZE
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

char text[4096];
long hits;
pthread_t t;

void *scan(void *arg) {
  long n = 0;
  for (int i = 0; i < 4096; i += 2)
    n += text[i] == 'q';
  hits = n;
  return arg;
}

int main(void) {
  pthread_create(&t, NULL, scan, NULL);
  text[3] = 'q';
  text[6] = 'q';
  pthread_join(t, NULL);
  return 0;
}

// READS: reads 2048 wrong 0
// SIZE: {{^ *[0-9]{1,3}$}}

// CHECK: ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK: candidate 1: data race on text+6 ({{0x[0-9a-f]+}}) (1 bytes)
// CHECK-DAG: write by thread 0 at {{.*}}strided_reads_one_window.c:31 in main
// CHECK-DAG: read by thread 1 at {{.*}}strided_reads_one_window.c:23 in scan
// CHECK-NOT: candidate 2
// CHECK: exit=66
