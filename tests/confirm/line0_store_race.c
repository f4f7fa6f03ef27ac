// A store with no line: at -O2 clang merges `step = step_two` and `step = step_one`, the two arms
// of an if/else in pick(), into one store of a selected value, whose debug location is line 0 of
// pick's file. That store is still the user's: the report's write stack starts at it, in pick,
// with its file and no line (as ThreadSanitizer prints it), and worker's call below it. It once
// came out upside down (worker's call first, then "pick l0.c:0:0"): frames at line 0 were taken
// for compiler-made ones (a static-init `_GLOBAL__sub_I_`), and the first frame with a line went
// on top. htslib's nibble2base dispatch (fixed upstream in 5d318680) had this shape.
//
// RUN: %ilgen cc -g -O2 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=DUMP
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int mode;
static int early, late;
static void step_one(int *p) { *p += 1; }
static void step_two(int *p) { *p += 2; }
static void pick(int *p);
static void (*step)(int *) = pick;

static void pick(int *p) {
  if (mode)
    step = step_two;
  else
    step = step_one;
  step(p);
}

static void *worker(void *arg) {
  int own = 0;
  if (arg == &late)
    usleep(20000);
  step(&own);
  *(int *)arg = own;
  return 0;
}

int main(int argc, char **argv) {
  (void)argv;
  mode = argc > 1;
  pthread_t a, b;
  pthread_create(&a, 0, worker, &early);
  pthread_create(&b, 0, worker, &late);
  pthread_join(a, 0);
  pthread_join(b, 0);
  printf("%d %d\n", early, late);
  return 0;
}

// OUT: 1 1

// DUMP: T1 write step size=8 at /{{.*}}line0_store_race.c:0:0 pick

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT: Read of size 8 at 0x{{[0-9a-f]+}} by thread T2:
// CHECK-NEXT: #0 worker /{{.*}}line0_store_race.c:[[#CALL:]]:3
// CHECK-EMPTY:
// CHECK-NEXT: Previous write of size 8 at 0x{{[0-9a-f]+}} by thread T1:
// CHECK-NEXT: #0 pick /{{.*}}line0_store_race.c{{$}}
// CHECK-NEXT: #1 worker /{{.*}}line0_store_race.c:[[#CALL]]:3
// CHECK-EMPTY:
// CHECK-NEXT: Location is global 'step' of size 8
// CHECK:      SUMMARY: ilgen: data race /{{.*}}line0_store_race.c:[[#CALL]] in worker
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
