// A race inside an instrumented shared library: `ilgen cc -shared` builds this file's library part
// (LIB) into a .so, whose constructor registers its own `ilgen_sites` section with the runtime;
// the recorded run gives its sites ids past the executable's and names the library in meta.json.
// The report names both accesses by the library's lines (lib_add's write, lib_get's read), not by
// the executable's calls of them; a library without its sites would show only the callers' lines.
// Twice: linked to the executable, and loaded with dlopen (the executable exports the runtime's
// hooks for it) after a first dlopen'ed library of no sites, so that its load address and order
// differ from the linked run's; the replay maps the same ids by build id.
//
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: %ilgen cc -g -O1 -fPIC -shared -DLIB %s -o %t.dir/libsharedrace.so
// RUN: %ilgen cc -g -O1 -fPIC -shared -DOTHER %s -o %t.dir/libother.so
// RUN: %ilgen cc -g -O1 %s -L%t.dir -lsharedrace -Wl,-rpath,%t.dir -o %t.dir/linked
// RUN: %ilgen cc -g -O1 -DDLOPEN=\"%t.dir/libsharedrace.so\" -DFIRST=\"%t.dir/libother.so\" %s -ldl -o %t.dir/loaded
//
// RUN: env ILGEN_OPTIONS=trace_dir=%t.dir/linked.trace %t.dir/linked
// RUN: FileCheck %s --check-prefix=META < %t.dir/linked.trace/meta.json
// RUN: sh -c '%ilgen detect %t.dir/linked.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,LINKED
// RUN: sh -c '%ilgen replay %t.dir/linked.trace:1; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,LINKED
//
// RUN: env ILGEN_OPTIONS=trace_dir=%t.dir/loaded.trace %t.dir/loaded
// RUN: FileCheck %s --check-prefix=META < %t.dir/loaded.trace/meta.json
// RUN: sh -c '%ilgen detect %t.dir/loaded.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,LOADED
//
// The library rebuilt (another build id): detect refuses to name its sites by the new file.
// RUN: %ilgen cc -g -O1 -fPIC -shared -DLIB -DREBUILT %s -o %t.dir/libsharedrace.so
// RUN: sh -c '%ilgen detect %t.dir/linked.trace 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=REBUILT
//
// META:      "modules": [
// META-NEXT:   {
// META-NEXT:     "path": "{{.*}}/libsharedrace.so",
// META-NEXT:     "build_id": "{{[0-9a-f]+}}",
//
// CHECK:      WARNING: ilgen: data race
// CHECK-NOT:  libsharedrace.so+0x
// CHECK-DAG:    #0 lib_add {{.*}}shared_library_race.c:53:
// CHECK-DAG:    #0 lib_get {{.*}}shared_library_race.c:57:
// CHECK-NOT:  libsharedrace.so+0x
// CHECK:      SUMMARY: ilgen: data race {{.*}}shared_library_race.c:{{53 in lib_add|57 in lib_get}}
// LINKED:     exit=66
// LOADED:     exit=66
//
// REBUILT:    libsharedrace.so is not the binary that was recorded
// REBUILT:    exit=

#if defined(LIB)
int lib_total;
#ifdef REBUILT
int lib_unused = 1;
#endif

void lib_add(int n) {
  lib_total += n;
}

int lib_get(void) {
  return lib_total;
}
#elif defined(OTHER)
int other_value(void) { return 7; }
#else
#include <pthread.h>
#include <stdio.h>

#ifdef DLOPEN
#include <dlfcn.h>
static void (*lib_add)(int);
static int (*lib_get)(void);
#else
void lib_add(int n);
int lib_get(void);
#endif

static void *worker(void *arg) {
  (void)arg;
  lib_add(5);
  return NULL;
}

int main(void) {
#ifdef DLOPEN
  if (!dlopen(FIRST, RTLD_NOW | RTLD_GLOBAL))
    return 2;
  void *lib = dlopen(DLOPEN, RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  lib_add = (void (*)(int))dlsym(lib, "lib_add");
  lib_get = (int (*)(void))dlsym(lib, "lib_get");
#endif
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  int seen = lib_get();
  pthread_join(t, NULL);
  printf("seen %d\n", seen);
  return 0;
}
#endif
