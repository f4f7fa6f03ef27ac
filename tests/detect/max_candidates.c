// Three unprotected counters, each written by main and by a worker: three race candidates. With
// --max-candidates 1 only the first (races by object address: a) is written and replayable; the
// summary says how many more there were and which flag to raise. A candidates file of the format
// before heads were counts (version 6) is refused, naming the file, with the advice to detect
// again.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck --check-prefix=ALL %s
// RUN: sh -c '%ilgen detect --no-replay --max-candidates 1 %t.trace 2>%t.err; echo "exit=$?"' | FileCheck --check-prefix=CAP %s
// RUN: FileCheck --check-prefix=CAP-ERR %s < %t.err
// RUN: test ! -e %t.trace/schedule-1.json
// RUN: sh -c '%ilgen replay %t.trace:2; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=NO-SECOND %s
// RUN: sed -i 's/"format_version": 7/"format_version": 6/' %t.trace/candidates.json
// RUN: sh -c '%ilgen replay %t.trace:1; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=OLD %s
// RUN: sh -c '%ilgen detect --no-replay --max-candidates 0 %t.trace; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=ZERO %s
#include <pthread.h>

int a, b, c;

void *worker(void *arg) {
  a++;
  b++;
  c++;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  a++;
  b++;
  c++;
  pthread_join(t, NULL);
  return 0;
}

// ALL:      ilgen: 3 candidate(s): 3 race(s), 0 deadlock(s)
// ALL-NOT:  not written
// ALL:      exit=66

// CAP:      ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CAP:      ilgen: 2 more candidates not written, raise --max-candidates (now 1)
// CAP:      candidate 1: data race on a (0x{{[0-9a-f]+}}) (4 bytes)
// CAP-NOT:  candidate 2
// CAP:      exit=66
// CAP-ERR:  ilgen: 2 more candidates not written, raise --max-candidates (now 1)

// NO-SECOND: ilgen: error: {{.*}}candidates.json has 1 candidate(s), no candidate 2
// NO-SECOND: exit=2

// OLD: ilgen: error: {{.*}}.trace/candidates.json has format version 6, this ilgen reads 7; run `ilgen detect` again
// OLD: exit=2

// ZERO: ilgen: error: --window, --max-per-var, --max-states and --max-candidates must be at least 1
// ZERO: exit=2
