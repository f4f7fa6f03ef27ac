// `ilgen cc` is a drop-in compiler: arguments reach clang untouched (`--version`, `-###`), separate
// compile and link steps work (the plugin at compile time, the runtime at link time), clang's exit
// status passes through, and a missing plugin is one clear error with exit code 2.
//
// RUN: %ilgen cc --version | FileCheck --check-prefix=VERSION %s
// VERSION: clang version 19
//
// RUN: %ilgen cc -### -c %s -o %t.o 2>&1 | FileCheck --check-prefix=COMPILE %s
// COMPILE:      "-cc1"
// COMPILE-SAME: "-debug-info-kind=line-tables-only"
// COMPILE-SAME: "-load" "{{[^"]*}}libilgen_pass.so" "-fpass-plugin={{[^"]*}}libilgen_pass.so"
//
// Separate compile and link steps, as make and CMake run them.
// RUN: rm -rf %t.trace
// RUN: %ilgen cc -O1 -I %testinc -c %s -o %t.o
// RUN: %ilgen cc %t.o -o %t
// RUN: env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
//
// As CC for make: `make CC="ilgen cc"` builds a program that records.
// RUN: rm -rf %t.make %t.make-trace
// RUN: make -s -f %S/Inputs/cc_make.mk CC="%ilgen cc" SRC=%s OUT=%t.make INC=%testinc
// RUN: env ILGEN_OPTIONS=trace_dir=%t.make-trace %t.make
// RUN: %ilgen dump %t.make-trace | FileCheck %s
//
// Clang's own failures keep clang's status (1) and message.
// RUN: sh -c '%ilgen cc %t.does-not-exist.c -o %t.x; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=CLANGFAIL %s
// CLANGFAIL: no such file or directory: '{{.*}}does-not-exist.c'
// CLANGFAIL: exit=1
//
// An ilgen executable without plugin and runtime beside it says where it looked.
// RUN: rm -rf %t.bin && mkdir %t.bin && cp %ilgen %t.bin/ilgen
// RUN: sh -c '%t.bin/ilgen cc %s -o %t.x; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NOPLUGIN %s
// NOPLUGIN:      ilgen: error: cannot find libilgen_pass.so and libilgen_rt.a (looked in {{.*}}.bin and {{.*}}.bin/../lib/ilgen); run `make build`
// NOPLUGIN-NEXT: exit=2
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int g;

int main(void) {
  pthread_mutex_lock(&m);
  g = 1;
  pthread_mutex_unlock(&m);
  return 0;
}

// -O1 keeps the lock, the store and the unlock, and the line tables that name them.
// CHECK:      T0 thread main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}cc_wrapper.c:42:3 main
// CHECK-NEXT: T0 write g size=4 at {{.*}}cc_wrapper.c:43:{{[0-9]+}} main
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}cc_wrapper.c:44:3 main
