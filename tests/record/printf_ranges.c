// The sprintf family is recorded as a write of the bytes each call produced into its buffer:
// the result and the NUL, cut to snprintf's bound, at the call's site. A lock round trip between
// the calls starts a new segment each time, so every call's write stands between two sync events.
// The reads of the format's arguments are not recorded.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
//
// With _FORTIFY_SOURCE the calls become __snprintf_chk and __sprintf_chk: the same ranges.
// RUN: %ilgen cc -g -O2 -D_FORTIFY_SOURCE=2 -I %testinc %s -o %t.fortify
// RUN: nm %t.fortify | FileCheck %s --check-prefix=FORTIFY
// RUN: rm -rf %t.ftrace && env ILGEN_OPTIONS=trace_dir=%t.ftrace %t.fortify
// RUN: %ilgen dump %t.ftrace | FileCheck %s --check-prefix=RANGES
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t sep = PTHREAD_MUTEX_INITIALIZER;
char line[32];
char small[32];
volatile int value = 12345;

static void next_segment(void) {
  pthread_mutex_lock(&sep);
  pthread_mutex_unlock(&sep);
}

int main(void) {
  int a = snprintf(line, sizeof line, "v=%d", value);
  next_segment();
  int b = snprintf(small, 4, "v=%d", value);
  next_segment();
  int c = sprintf(line + 8, "%d!", value);
  next_segment();
  return a == 7 && b == 7 && c == 6 ? 0 : 1;
}

// CHECK:      T0 thread main
// CHECK-NEXT: T0 read value size=4 at {{.*}}printf_ranges.c:29:{{[0-9]+}} main
// CHECK-NEXT: T0 write line size=8 at {{.*}}printf_ranges.c:29:11 main
// CHECK-NEXT: T0 lock sep
// CHECK-NEXT: T0 unlock sep
// Truncated to the bound of 4.
// CHECK-NEXT: T0 read value size=4 at {{.*}}printf_ranges.c:31:{{[0-9]+}} main
// CHECK-NEXT: T0 write small size=4 at {{.*}}printf_ranges.c:31:11 main
// CHECK-NEXT: T0 lock sep
// CHECK-NEXT: T0 unlock sep
// CHECK-NEXT: T0 read value size=4 at {{.*}}printf_ranges.c:33:{{[0-9]+}} main
// CHECK-NEXT: T0 write line+8 size=7 at {{.*}}printf_ranges.c:33:11 main
// CHECK-NEXT: T0 lock sep
// CHECK-NEXT: T0 unlock sep{{.*}}
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}printf_ranges.c:35:3 main
// CHECK-NOT:  {{.}}

// FORTIFY-DAG: U __snprintf_chk
// FORTIFY-DAG: U __sprintf_chk

// RANGES:      T0 write line size=8 at {{.*}}printf_ranges.c:29:11 main
// RANGES-NEXT: T0 lock sep
// RANGES:      T0 write small size=4 at {{.*}}printf_ranges.c:31:11 main
// RANGES-NEXT: T0 lock sep
// RANGES:      T0 write line+8 size=7 at {{.*}}printf_ranges.c:33:11 main
// RANGES-NEXT: T0 lock sep
