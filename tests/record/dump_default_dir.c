// Without ILGEN_OPTIONS the runtime writes ./ilgen-out/<binary>-<pid>/, and `ilgen dump` without
// an argument reads the newest directory there.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.dir && mkdir %t.dir
// RUN: cd %t.dir && %t
// RUN: cd %t.dir && %ilgen dump | FileCheck %s
// An empty directory has no trace to default to.
// RUN: rm -rf %t.empty && mkdir %t.empty
// RUN: cd %t.empty && sh -c '%ilgen dump; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NONE %s
#include <pthread.h>

int g;

int main(void) {
  g = 1;
  return 0;
}

// CHECK:      run binary={{.*}}dump_default_dir.c.tmp pid={{[0-9]+}} {{.*}} end=exit threads=1
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 write g size=4 at {{.*}}dump_default_dir.c:16:{{[0-9]+}} main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}dump_default_dir.c:17:3 main
// CHECK-NOT: {{.}}

// NONE:      ilgen: error: no trace directory given and none found under ilgen-out; run a program built with `ilgen cc`, or pass the trace directory
// NONE-NEXT: exit=2
