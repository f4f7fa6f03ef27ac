// `ilgen detect --shard I/N` and `ilgen merge`: four unsynchronized counters (each written by the
// worker and by main) and a lock-order inversion give five units of work (the races of a, b, c,
// d, then the deadlocks), which shards 1/3, 2/3 and 3/3 split 2, 2 and 1 (unit u goes to shard
// u mod 3 + 1). Each shard replays its own candidates; merged in any order, their JSON reports
// equal the unsharded report (apart from what belongs to each replay process: pid, replay
// directory, the replay's addresses), with the unsharded candidate numbers; exit 66 as unsharded.
// Shards of another trace, a shard missing or given twice, and a whole report are refused (exit 2).
//
// RUN: %ilgen cc -g -O0 -I%testinc %s -o %t
// RUN: rm -rf %t.d %t.e && %ilgen run --out %t.d -- %t && %ilgen run --out %t.e -- %t
// RUN: sh -c '%ilgen detect --format json %t.d > %t.whole.json; test $? = 66'
// RUN: sh -c '%ilgen detect --shard 1/3 --format json %t.d > %t.1.json; test $? = 66'
// RUN: sh -c '%ilgen detect --shard 2/3 --format json %t.d > %t.2.json; test $? = 66'
// RUN: sh -c '%ilgen detect --shard 3/3 --format json %t.d > %t.3.json; test $? = 66'
// RUN: python3 -c 'import json,sys; [print("shard", r["shard"]["index"], "units", [k[1] for k in r["shard"]["candidates"]], "candidates", r["counts"]["candidates"]) for r in (json.load(open(p)) for p in sys.argv[1:])]' %t.1.json %t.2.json %t.3.json | FileCheck %s --check-prefix=SHARDS
// RUN: python3 %S/../confirm/Inputs/validate.py %S/../confirm/Inputs/ilgen-report.schema.json %t.2.json | FileCheck %s --check-prefix=VALID
// RUN: test -f %t.d/shard-2-of-3/schedule-2.json && test -d %t.d/shard-2-of-3/replay-2
//
// RUN: sh -c '%ilgen merge --format json %t.3.json %t.1.json %t.2.json > %t.merged.json; test $? = 66'
// RUN: python3 %S/../Inputs/same_report.py %t.whole.json %t.merged.json | FileCheck %s --check-prefix=SAME
// RUN: python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); [print(f["kind"], f["object"]["name"], f["candidates"]) for f in r["findings"]]; [print("unconfirmed", u["candidate"], u["predicted"]) for u in r["unconfirmed"]]' %t.merged.json | FileCheck %s --check-prefix=MERGED
// RUN: sh -c '%ilgen merge %t.1.json %t.2.json %t.3.json; echo "exit=$?"' | FileCheck %s --check-prefix=TEXT
//
// RUN: sh -c '%ilgen merge %t.1.json %t.3.json; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: sh -c '%ilgen merge %t.1.json %t.2.json %t.3.json %t.1.json; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: sh -c '%ilgen merge %t.whole.json; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=WHOLE
// RUN: sh -c '%ilgen detect --shard 1/3 --format json %t.e > %t.other.json; test $? = 66'
// RUN: sh -c '%ilgen merge %t.other.json %t.2.json %t.3.json; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: sh -c '%ilgen detect --shard 1/3 --window 500 --format json %t.d > %t.opts.json; %ilgen merge %t.opts.json %t.2.json %t.3.json; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=OPTIONS
// RUN: sh -c '%ilgen detect --shard 4/3 --format json %t.d; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: sh -c '%ilgen detect --shard 1/3 %t.d; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=TEXT-SHARD
#include <pthread.h>

#include "ilgen_test.h"

int a, b, c, d;
pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
ilgen_test_barrier_t worker_done;

void *worker(void *arg) {
  a++;
  b++;
  c++;
  d++;
  pthread_mutex_lock(&m1);
  pthread_mutex_lock(&m2);
  pthread_mutex_unlock(&m2);
  pthread_mutex_unlock(&m1);
  __ilgen_testonly_barrier_wait(&worker_done);
  return arg;
}

int main(void) {
  pthread_t t;
  __ilgen_testonly_barrier_init(&worker_done, 2);
  pthread_create(&t, NULL, worker, NULL);
  // The test barrier is no sync event: the analysis may reorder main's accesses and locks
  // before the worker's.
  __ilgen_testonly_barrier_wait(&worker_done);
  a = 1;
  b = 2;
  c = 3;
  d = 4;
  pthread_mutex_lock(&m2);
  pthread_mutex_lock(&m1);
  pthread_mutex_unlock(&m1);
  pthread_mutex_unlock(&m2);
  pthread_join(t, NULL);
  return 0;
}

// SHARDS: shard 1 units [0, 3] candidates 2
// SHARDS: shard 2 units [1, 4] candidates 2
// SHARDS: shard 3 units [2] candidates 1
// VALID: valid
// SAME: same
//
// Every candidate's replay meets all four races, the deadlock's too: its schedule leaves the
// worker's second lock for after its end while main waits at the test barrier (which the model
// does not know) for the worker, so the gate lets the worker go once the schedule stops moving;
// main then passes the barrier and no deadlock can happen.
// MERGED:      race a [1, 2, 3, 4, 5]
// MERGED-NEXT: race b [1, 2, 3, 4, 5]
// MERGED-NEXT: race c [1, 2, 3, 4, 5]
// MERGED-NEXT: race d [1, 2, 3, 4, 5]
// MERGED-NOT:  unconfirmed
//
// TEXT: ilgen: 4 finding(s) confirmed
// TEXT: exit=66
// MISSING: ilgen: error: shard 2/3 missing: merge the reports of all 3 shards
// MISSING: exit=2
// TWICE: ilgen: error: {{.*}}.1.json and {{.*}}.1.json are both shard 1/3; give each shard once
// TWICE: exit=2
// WHOLE: ilgen: error: {{.*}}whole.json is the report of a whole analysis, not of a shard
// WHOLE: exit=2
// OTHER: ilgen: error: {{.*}}other.json and {{.*}}.2.json are shards of different traces (recorded runs) of one binary
// OTHER: exit=2
// OPTIONS: ilgen: error: {{.*}}opts.json and {{.*}}.2.json are shards analysed with different options
// OPTIONS: exit=2
// BAD: error: invalid value '4/3' for '--shard <I/N>'
// BAD: exit=2
// TEXT-SHARD: ilgen: error: --shard replays the candidates of one trace directory and prints the shard's JSON report for `ilgen merge`
// TEXT-SHARD: exit=2
