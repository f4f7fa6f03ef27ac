// detect and replay run only the executable that was recorded, known by the ELF build id the
// runtime read from the running process (meta.json's build_id), never by reading the file: the
// same binary is replayed; one rebuilt from other code at the same path, or one linked without a
// build id, is refused with exit 2 and a message saying what to do, before anything runs.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.noid.trace %t.noid.out && env ILGEN_OPTIONS=trace_dir=%t.trace %t
//
// The same binary: replayed, the race confirmed.
// RUN: sh -c '%ilgen detect %t.trace > /dev/null 2>&1; echo "exit=$?"' | FileCheck --check-prefix=SAME %s
// SAME: exit=66
//
// Rebuilt from other code at the same path: refused by detect and by replay.
// RUN: %ilgen cc -g -O0 -DREBUILT %s -o %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=REBUILT %s
// RUN: sh -c '%ilgen replay %t.trace:1; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=REBUILT %s
// REBUILT:      ilgen: error: {{.*}}build_identity.c.tmp is not the binary that was recorded (its build id is {{[0-9a-f]+}}, the trace says "{{[0-9a-f]+}}"): it was rebuilt or replaced since; record the program again
// REBUILT-NEXT: exit=2
//
// Linked without a build id: the runtime records an empty one, detect refuses the binary, and the
// replaying runtime refuses any schedule (an empty id would match any other binary without one).
// RUN: %ilgen cc -g -O0 %s -o %t.noid -Wl,--build-id=none
// RUN: env ILGEN_OPTIONS=trace_dir=%t.noid.trace %t.noid
// RUN: FileCheck --check-prefix=NOID-META %s < %t.noid.trace/meta.json
// NOID-META: "build_id": "",
// RUN: sh -c '%ilgen detect %t.noid.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NOID %s
// NOID:      ilgen: error: {{.*}}.noid has no ELF build id, so ilgen cannot check that it is the binary that was recorded; rebuild it with `ilgen cc` (without -Wl,--build-id=none) and record it again
// NOID-NEXT: exit=2
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.trace/schedule-1.json:outcome_dir=%t.noid.out \
// RUN:   sh -c '%t.noid; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NOID-GATE %s
// NOID-GATE:      ilgen: this binary has no ELF build id, so schedule {{.*}}schedule-1.json cannot be checked against it; rebuild it with `ilgen cc`, record it again and run ilgen detect on its trace (exit status 88)
// NOID-GATE-NEXT: exit=88
#include <pthread.h>

#ifdef REBUILT
#define STEP 2
#else
#define STEP 1
#endif

int counter;

static void *bump(void *arg) {
  counter += STEP;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, bump, NULL);
  counter += STEP;
  pthread_join(t, NULL);
  return 0;
}
