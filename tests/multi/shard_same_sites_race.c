// `ilgen detect --shard I/N` and `ilgen merge` when candidates of several units share a pair of
// sites: a global `g` races at its own two lines (setter's write, main's), and four blocks of `d`
// each race at the same two other lines (its worker's write, main's). The units (races of g, of
// each block, then the deadlocks) are 0 to 5; replay tries the candidates at one pair of sites in
// turn, so the blocks' units 1 to 4, whose race pairs share their sites, form one group and go to
// one shard: groups {0}, {1, 2, 3, 4}, {5} go to shards 1, 2 and 1 of 2. Shard 2 replays the
// first candidate of its pair, which confirms, and not the other three, as the unsharded run
// does; merged, the shards' JSON reports equal the unsharded one, the candidates not replayed
// renumbered with the one that confirmed their pair.
//
// RUN: %ilgen cc -g -O0 -I%testinc %s -o %t
// RUN: rm -rf %t.d && %ilgen run --out %t.d -- %t
// RUN: sh -c '%ilgen detect --format json %t.d > %t.whole.json; test $? = 66'
// RUN: sh -c '%ilgen detect --shard 1/2 --format json %t.d > %t.1.json; test $? = 66'
// RUN: sh -c '%ilgen detect --shard 2/2 --format json %t.d > %t.2.json; test $? = 66'
// RUN: python3 -c 'import json,sys; [print("shard", r["shard"]["index"], "units", [k[1] for k in r["shard"]["candidates"]], "replayed", r["counts"]["candidates"], "not replayed", r["counts"]["not_replayed"]) for r in (json.load(open(p)) for p in sys.argv[1:])]' %t.1.json %t.2.json | FileCheck %s --check-prefix=SHARDS
// RUN: python3 %S/../confirm/Inputs/validate.py %S/../confirm/Inputs/ilgen-report.schema.json %t.2.json | FileCheck %s --check-prefix=VALID
// RUN: sh -c '%ilgen merge --format json %t.2.json %t.1.json > %t.merged.json; test $? = 66'
// RUN: python3 %S/../Inputs/same_report.py %t.whole.json %t.merged.json | FileCheck %s --check-prefix=SAME
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); [print(f["kind"], f["current"]["location"]["line"], f["previous"]["location"]["line"], f["candidates"]) for f in r["findings"]]; [print("not replayed", n["candidate"], "confirmed by", n["confirmed_by"]) for n in r["not_replayed"]]' %t.merged.json | FileCheck %s --check-prefix=MERGED
#include <pthread.h>

#include "ilgen_test.h"

// Blocks 64 bytes apart: four shared objects, not one.
long d[4][8];
long g;
ilgen_test_barrier_t written;

void *worker(void *arg) {
  long *block = arg;
  *block = 1;
  __ilgen_testonly_barrier_wait(&written);
  return NULL;
}

void *setter(void *arg) {
  g = 1;
  __ilgen_testonly_barrier_wait(&written);
  return arg;
}

int main(void) {
  pthread_t t[5];
  __ilgen_testonly_barrier_init(&written, 6);
  pthread_create(&t[4], NULL, setter, NULL);
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, worker, d[i]);
  // The test barrier is no sync event: the analysis may reorder main's writes before the
  // threads', while every replay has them after.
  __ilgen_testonly_barrier_wait(&written);
  for (int i = 0; i < 4; i++)
    d[i][0] = 2;
  g = 2;
  for (int i = 0; i < 5; i++)
    pthread_join(t[i], NULL);
  return 0;
}

// SHARDS: shard 1 units [0] replayed 1 not replayed 0
// SHARDS: shard 2 units [1, 2, 3, 4] replayed 1 not replayed 3
// VALID: valid
// SAME: same
// Candidate 1's replay (g's) runs free after its schedule and meets the blocks' race too.
// MERGED:      race 53 32 [1, 2]
// MERGED-NEXT: race 54 38 [1, 2]
// MERGED-NEXT: not replayed 3 confirmed by 2
// MERGED-NEXT: not replayed 4 confirmed by 2
// MERGED-NEXT: not replayed 5 confirmed by 2
