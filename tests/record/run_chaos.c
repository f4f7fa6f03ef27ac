// Schedule perturbation: `ilgen run --runs 2 --chaos=5` records two runs with seeds 5 and 6 (in
// meta.json); the same seed makes the same decisions (priority drops and delays per thread and
// operation, printed at verbosity 2) in two runs, another seed other ones.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.runs && %ilgen run --runs 2 --chaos=5 --out %t.runs -- %t 2> %t.err
// RUN: FileCheck %s --check-prefix=RUNS < %t.err
// RUN: grep '"chaos_seed": 5' %t.runs/run-0/meta.json
// RUN: grep '"chaos_seed": 6' %t.runs/run-1/meta.json
// RUN: %ilgen dump %t.runs/run-1 | FileCheck %s --check-prefix=DUMP
//
// RUN: rm -rf %t.a %t.b %t.c
// RUN: env ILGEN_OPTIONS=trace_dir=%t.a:chaos=5:verbosity=2:chaos_delay_us=200 %t 2> %t.err.a
// RUN: env ILGEN_OPTIONS=trace_dir=%t.b:chaos=5:verbosity=2:chaos_delay_us=200 %t 2> %t.err.b
// RUN: env ILGEN_OPTIONS=trace_dir=%t.c:chaos=9:verbosity=2:chaos_delay_us=200 %t 2> %t.err.c
// RUN: grep "ilgen: chaos:" %t.err.a | sort > %t.dec.a
// RUN: grep "ilgen: chaos:" %t.err.b | sort > %t.dec.b
// RUN: grep "ilgen: chaos:" %t.err.c | sort > %t.dec.c
// RUN: diff %t.dec.a %t.dec.b
// RUN: not diff %t.dec.a %t.dec.c
// RUN: FileCheck %s --check-prefix=DECISIONS < %t.dec.a
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int total;

void *worker(void *arg) {
  for (int i = 0; i < 5; i++) {
    pthread_mutex_lock(&m);
    total++;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
  return total == 15 ? 0 : 1;
}

// RUNS: ilgen: trace: {{.*}}run_chaos.c.tmp.runs/run-0
// RUNS: ilgen: trace: {{.*}}run_chaos.c.tmp.runs/run-1
// DUMP: T3 thread parent=T0 child=2
// DUMP: T3 unlock
// DECISIONS: ilgen: chaos: thread T0/0 op 0 drops {{[0-9]}} delay {{[0-9]+}} us
// DECISIONS: ilgen: chaos: thread T0/2 op 10 drops
