// When the recorded executable was rebuilt (from other code: another ELF build id) or removed after
// the run, `ilgen dump` still prints the trace, with a warning: sites as ids and objects as
// addresses, since the new binary's tables would name the wrong lines. Bytes appended to the file
// change no code and no build id: that is still the recorded build.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=SAME %s
// RUN: echo >> %t
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=SAME %s
// RUN: %ilgen cc -g -O0 -I %testinc -DREBUILT %s -o %t
// RUN: %ilgen dump %t.trace 2>%t.err | FileCheck --check-prefix=CHANGED %s
// RUN: FileCheck --check-prefix=WARN-CHANGED %s < %t.err
// RUN: rm %t
// RUN: %ilgen dump %t.trace 2>%t.err | FileCheck --check-prefix=CHANGED %s
// RUN: FileCheck --check-prefix=WARN-MISSING %s < %t.err
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int g;

int main(void) {
  pthread_mutex_lock(&m);
#ifdef REBUILT
  g = 2;
#else
  g = 1;
#endif
  pthread_mutex_unlock(&m);
  return 0;
}

// SAME:      T0 thread main
// SAME-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}dump_changed_binary.c:23:3 main
// SAME-NEXT: T0 write g size=4 at {{.*}}dump_changed_binary.c:27:{{[0-9]+}} main
// SAME-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}dump_changed_binary.c:29:3 main
//
// CHANGED:      T0 thread main
// CHANGED-NEXT: T0 lock 0x{{[0-9a-f]+}} seq={{[0-9]+}} at site#{{[0-9]+}}
// CHANGED-NEXT: T0 write 0x{{[0-9a-f]+}} size=4 at site#{{[0-9]+}}
// CHANGED-NEXT: T0 unlock 0x{{[0-9a-f]+}} seq={{[0-9]+}} at site#{{[0-9]+}}
//
// WARN-CHANGED: ilgen: warning: {{.*}}dump_changed_binary.c.tmp is not the binary that was recorded (its build id is {{[0-9a-f]+}}, the trace says "{{[0-9a-f]+}}"): it was rebuilt or replaced since; record the program again; sites are shown as ids and objects as addresses
// WARN-MISSING: ilgen: warning: failed to read the recorded binary {{.*}}dump_changed_binary.c.tmp: {{.*}}; sites are shown as ids and objects as addresses
