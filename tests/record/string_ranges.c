// memcpy, memset and the string functions are recorded as the byte ranges they read and write
// (one record per range, not per byte). A lock round trip between the calls starts a new segment
// each time, so every call's records stand between two sync events.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
// RUN: %ilgen dump %t.trace | grep -c '^T0 ' | FileCheck --check-prefix=COUNT %s
#include <pthread.h>
#include <string.h>

pthread_mutex_t sep = PTHREAD_MUTEX_INITIALIZER;
char src[16] = "0123456789abcde";
char dst[32];
const char greeting[] = "ilgen";
char name[16];
char zeros[40];
size_t len;

static void next_segment(void) {
  pthread_mutex_lock(&sep);
  pthread_mutex_unlock(&sep);
}

int main(void) {
  memcpy(dst, src, 16);
  next_segment();
  strcpy(name, greeting);
  next_segment();
  memset(zeros + 8, 0, 32);
  next_segment();
  len = strlen(name);
  return len == 5 ? 0 : 1;
}

// The order of a call's read and write ranges is the wrapper's choice: check them as a set.
// CHECK:      T0 thread main
// CHECK-DAG:  T0 read src size=16 at {{.*}}string_ranges.c:26:3 main
// CHECK-DAG:  T0 write dst size=16 at {{.*}}string_ranges.c:26:3 main
// CHECK:      T0 lock sep
// CHECK-NEXT: T0 unlock sep
// CHECK-DAG:  T0 read greeting size=6 at {{.*}}string_ranges.c:28:3 main
// CHECK-DAG:  T0 write name size=6 at {{.*}}string_ranges.c:28:3 main
// CHECK:      T0 lock sep
// CHECK-NEXT: T0 unlock sep
// CHECK-NEXT: T0 write zeros+8 size=32 at {{.*}}string_ranges.c:30:3 main
// CHECK-NEXT: T0 lock sep
// CHECK-NEXT: T0 unlock sep
// CHECK-NEXT: T0 read name size=6 at {{.*}}string_ranges.c:32:{{[0-9]+}} main
// CHECK-NEXT: T0 write len size=8 at {{.*}}string_ranges.c:32:{{[0-9]+}} main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}string_ranges.c:33:3 main
// Exactly these records: the thread line, 6 sync events, 7 ranges (`len` is read again for
// the return value, in the segment of its write, which dominates the read) and the exit.
// COUNT: {{^}}15{{$}}
