// A race inside an instrumented shared library: `ilgen cc -shared` builds this file's library part
// (LIB) into a .so, whose constructor registers its own `ilgen_sites` section with the runtime;
// the recorded run gives its sites ids past the executable's and names the library in meta.json.
// The report names both accesses by the library's lines (add_to's write, lib_get's read), not by
// the executable's calls of them, which is all a library without its sites would show, and
// add_to's caller by its call's line (the return address into lib_add is that same frame);
// `ilgen replay --gdb` stops in the library at the finding's line.
//
// Twice: linked to the executable, and loaded with dlopen (the executable exports the runtime's
// hooks for it) after another instrumented library (OTHER), whose ids then come first. The
// replays of the dlopen'ed run (SWAP set) load the two in the other order: each gets its
// recorded ids back by build id, or the report would name the other library's lines.
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
// RUN: sh -c '%ilgen detect %t.dir/linked.trace; true' | grep -A2 '#0 add_to' | FileCheck %s --check-prefix=CALLER
// RUN: %ilgen replay %t.dir/linked.trace:1 --gdb -- -batch -ex 'ilgen finding' -ex frame 2>&1 | FileCheck %s --check-prefix=GDB
//
// RUN: env ILGEN_OPTIONS=trace_dir=%t.dir/loaded.trace %t.dir/loaded
// RUN: FileCheck %s --check-prefix=META2 < %t.dir/loaded.trace/meta.json
// RUN: env SWAP=1 sh -c '%ilgen detect %t.dir/loaded.trace; echo "exit=$?"' | FileCheck %s --check-prefixes=CHECK,LOADED
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
// META2:      "modules": [
// META2:        "path": "{{.*}}/libother.so",
// META2:        "first_site": [[#OTHER:]],
// META2-NEXT:   "units": [[#UNITS:]]
// META2:        "path": "{{.*}}/libsharedrace.so",
// META2:        "first_site": [[#OTHER+UNITS]],
//
// CHECK:      WARNING: ilgen: data race
// CHECK-NOT:  libsharedrace.so+0x
// CHECK-DAG:    #0 add_to {{.*}}shared_library_race.c:75:
// CHECK-DAG:    #0 lib_get {{.*}}shared_library_race.c:83:
// CHECK-NOT:  libsharedrace.so+0x
// CHECK:      SUMMARY: ilgen: data race {{.*}}shared_library_race.c:{{75 in add_to|83 in lib_get}}
// LINKED:     exit=66
// LOADED:     exit=66
//
// CALLER:      #0 add_to {{.*}}shared_library_race.c:75:
// CALLER-NEXT: #1 lib_add {{.*}}shared_library_race.c:79:
// CALLER-NEXT: #2 worker {{.*}}shared_library_race.c:
//
// GDB:        ilgen: candidate 1: data race on
// GDB-DAG:      access: {{read|write}} by thread T{{[01]}} at {{.*}}shared_library_race.c:75 in add_to
// GDB-DAG:      access: {{read|write}} by thread T{{[01]}} at {{.*}}shared_library_race.c:83 in lib_get
// GDB:        #{{[0-9]+}} {{.*}} in {{add_to|lib_get}} ({{.*}}) at {{.*}}shared_library_race.c:{{75|83}}
//
// REBUILT:    libsharedrace.so is not the binary that was recorded
// REBUILT:    exit=

#if defined(LIB)
int lib_total;
#ifdef REBUILT
int lib_unused = 1;
#endif

__attribute__((noinline)) static void add_to(int *total, int n) {
  *total += n;
}

void lib_add(int n) {
  add_to(&lib_total, n);
}

int lib_get(void) {
  return lib_total;
}
#elif defined(OTHER)
int other_value = 7;
int other_get(void) { return other_value; }
#else
#include <pthread.h>
#include <stdio.h>

#ifdef DLOPEN
#include <dlfcn.h>
#include <stdlib.h>
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
  int swap = getenv("SWAP") != NULL;
  void *first = dlopen(swap ? DLOPEN : FIRST, RTLD_NOW);
  void *second = dlopen(swap ? FIRST : DLOPEN, RTLD_NOW);
  void *lib = swap ? first : second, *other = swap ? second : first;
  if (!lib || !other) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  int (*other_get)(void) = (int (*)(void))dlsym(other, "other_get");
  if (other_get() != 7)
    return 3;
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
