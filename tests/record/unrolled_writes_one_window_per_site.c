// A loop unrolled by hand into four statements, each writing every fourth byte of one array
// (lbzip2's `*q++ = ch` in its run-length encoder): no site's writes abut, so none grows a range.
// The segment cache keeps each site's writes as windows of 64 bytes, one record per site and
// window where it took one per byte. `ilgen dump` expands them: the 4096 writes, each of 1 byte
// with its own statement's line; the thread file takes under 5000 bytes where one record per
// write took over 12000. main's write of out[5] races with the second statement's write of it,
// named at that line.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | awk '/^T1 write/ { split($6, at, ":"); off = $3 == "out" ? 0 : substr($3, 5); if ($4 != "size=1" || at[2] != 21 + off % 4) bad++; seen[off]++; n++ } END { print "writes", n, "distinct", length(seen), "wrong", bad + 0 }' | FileCheck %s --check-prefix=WRITES
// RUN: sh -c 'wc -c < %t.trace/t1.trace' | awk '{ print ($1 < 5000) ? "small" : "large " $1 }' | FileCheck %s --check-prefix=SIZE
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

char out[4096];
pthread_t t;

void *fill(void *arg) {
  for (int i = 0; i < 4096; i += 4) {
    out[i] = 'a';
    out[i + 1] = 'b';
    out[i + 2] = 'c';
    out[i + 3] = 'd';
  }
  return arg;
}

int main(void) {
  pthread_create(&t, NULL, fill, NULL);
  out[5] = 'q';
  pthread_join(t, NULL);
  return 0;
}

// WRITES: writes 4096 distinct 4096 wrong 0
// SIZE: small

// CHECK: ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK: candidate 1: data race on out+5 ({{0x[0-9a-f]+}}) (1 bytes)
// CHECK-DAG: write by thread 0 at {{.*}}unrolled_writes_one_window_per_site.c:31 in main
// CHECK-DAG: write by thread 1 at {{.*}}unrolled_writes_one_window_per_site.c:22 in fill
// CHECK-NOT: candidate 2
// CHECK: exit=66
