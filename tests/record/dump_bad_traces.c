// `ilgen dump` on a trace it cannot read gives one message naming the file and saying what to do,
// and exit code 2, never a panic: a thread file cut inside a record, a directory that is no trace,
// a meta.json and a thread file of another format version.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace %t.cut %t.foreign %t.v99 %t.tv99
// RUN: env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=GOOD %s
//
// Cut t0.trace 2 bytes into its first record (magic 8 + header 16 + length byte + 1).
// RUN: mkdir %t.cut && cp %t.trace/meta.json %t.cut/
// RUN: head -c 26 %t.trace/t0.trace > %t.cut/t0.trace
// RUN: sh -c '%ilgen dump %t.cut; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=CUT %s
// CUT:      ilgen: error: {{.*}}.cut/t0.trace is truncated at byte 24
// CUT-SAME: record the program again
// CUT-NEXT: exit=2
//
// RUN: mkdir %t.foreign && cp %s %t.foreign/
// RUN: sh -c '%ilgen dump %t.foreign; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=FOREIGN %s
// FOREIGN:      ilgen: error: {{.*}}.foreign is not an ilgen trace
// FOREIGN-NEXT: exit=2
//
// RUN: cp -r %t.trace %t.v99
// RUN: sed -i -e 's/"format_version": *[0-9]*/"format_version": 99/' %t.v99/meta.json
// RUN: sh -c '%ilgen dump %t.v99; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=V99 %s
// V99:      ilgen: error: {{.*}}.v99/meta.json has format version 99, this ilgen reads version {{[0-9]+}}; record the program again
// V99-NEXT: exit=2
//
// The thread file's version is the u32 right after its 8-byte magic.
// RUN: cp -r %t.trace %t.tv99
// RUN: sh -c 'printf "\143" | dd of=%t.tv99/t0.trace bs=1 seek=8 conv=notrunc 2>/dev/null'
// RUN: sh -c '%ilgen dump %t.tv99; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=TV99 %s
// TV99:      ilgen: error: {{.*}}.tv99/t0.trace has format version 99
// TV99-NEXT: exit=2
//
// A missing directory is an input error too.
// RUN: sh -c '%ilgen dump %t.nonexistent; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=MISSING %s
// MISSING:      ilgen: error: {{.*}}.nonexistent is not an ilgen trace
// MISSING-NEXT: exit=2
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int g;

int main(void) {
  pthread_mutex_lock(&m);
  g = 1;
  pthread_mutex_unlock(&m);
  return 0;
}

// GOOD:      T0 thread main
// GOOD-NEXT: T0 lock m
// GOOD-NEXT: T0 write g
// GOOD-NEXT: T0 unlock m
