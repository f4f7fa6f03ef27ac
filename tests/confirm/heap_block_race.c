// A race on heap memory names its block, as ThreadSanitizer does: thread T1 allocates a counter
// through a helper and main joins it; T2 and T3 then bump the counter's `hits` with no lock. The
// replay confirms the race, and the report says "Location is heap block of size N at ...
// allocated by thread T1 at:" with the allocation's stack (the malloc line in the helper, then
// its caller in T1's function). The size is what was asked for (32), as TSan prints it, though
// the runtime's shadow covers glibc's whole block of 40 usable bytes. JSON has the block as
// `heap_block` (valid against the schema), SARIF names it in the message.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: sh -c '%ilgen detect --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=JSON-VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: sh -c '%ilgen detect --format sarif %t.trace > %t.sarif; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: FileCheck %s --check-prefix=SARIF < %t.sarif
#include <pthread.h>
#include <stdlib.h>

struct counter {
  long pad[3];
  long hits;
};

struct counter *shared;

static struct counter *make_counter(void) {
  struct counter *c = malloc(sizeof(struct counter));
  c->hits = 0;
  return c;
}

void *maker(void *arg) {
  shared = make_counter();
  return arg;
}

void *bump(void *arg) {
  shared->hits++;
  return arg;
}

int main(void) {
  pthread_t t1, t2, t3;
  pthread_create(&t1, NULL, maker, NULL);
  pthread_join(t1, NULL);
  pthread_create(&t2, NULL, bump, NULL);
  pthread_create(&t3, NULL, bump, NULL);
  pthread_join(t2, NULL);
  pthread_join(t3, NULL);
  free(shared);
  return 0;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT: {{Read|Write}} of size 8 at 0x[[#%x,A:]] by thread T{{[23]}}:
// CHECK:      Location is heap block of size 32 at 0x[[#%x,A-24]] allocated by thread T1 at:
// CHECK-NEXT: #0 make_counter /{{.*}}heap_block_race.c:28:
// CHECK-NEXT: #1 maker /{{.*}}heap_block_race.c:34:
// CHECK-EMPTY:
// CHECK:      SUMMARY: ilgen: data race /{{.*}}heap_block_race.c:39 in bump
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66

// EXIT66: exit=66

// JSON-VALID: valid: ilgen report, format version 11
// JSON:      "heap_block": {
// JSON-NEXT:   "address": {{[0-9]+}},
// JSON-NEXT:   "size": 32,
// JSON-NEXT:   "thread": 1,
// JSON-NEXT:   "location": {
// JSON:          "line": 28,

// SARIF: "text": "Data race on 0x{{[0-9a-f]+}} (heap block of size 32 at 0x{{[0-9a-f]+}} allocated by T1): {{read|write}} of size 8 by T{{[23]}} races with
