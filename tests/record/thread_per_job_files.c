// A program that starts a thread per job (a pool of 4 started and joined per round, 500 rounds:
// 2,000 threads, as htslib's thrash_threads2 starts 9,000) writes a trace file per thread alive at
// once, not per thread: a thread that starts takes over the file of one that ended, after a
// section record (trace format 8). Every thread is still read with its own parent and child
// index, and the race of the last round's writers of `last` is predicted and confirmed by replay.
//
// RUN: %ilgen cc -g -O1 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c 'ls %t.trace | grep -c "^t[0-9]*\.trace$"; python3 -c "import json, sys; print(len(json.load(open(sys.argv[1]))[\"files\"]))" %t.trace/meta.json' | FileCheck --check-prefix=FILES %s
// FILES:      {{^[2-5]$}}
// FILES-NEXT: {{^[2-5]$}}
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=DUMP %s
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

enum { ROUNDS = 500, POOL = 4 };

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int jobs;
int last;

static void *job(void *arg) {
  long round = (long)arg;
  pthread_mutex_lock(&m);
  jobs++;
  pthread_mutex_unlock(&m);
  if (round == ROUNDS - 1)
    last = (int)round;
  return NULL;
}

int main(void) {
  for (long round = 0; round < ROUNDS; round++) {
    pthread_t pool[POOL];
    for (int i = 0; i < POOL; i++)
      pthread_create(&pool[i], NULL, job, (void *)round);
    for (int i = 0; i < POOL; i++)
      pthread_join(pool[i], NULL);
  }
  return jobs == ROUNDS * POOL && last == ROUNDS - 1 ? 0 : 1;
}

// DUMP:     threads=2001
// DUMP:     T1 thread parent=T0 child=0
// DUMP:     T2 thread parent=T0 child=1
// DUMP:     T2000 thread parent=T0 child=1999
// DUMP-NOT: thread parent

// CHECK:      WARNING: ilgen: data race
// CHECK:      {{Write|write}} of size 4 at 0x{{[0-9a-f]+}} by thread T{{(199[7-9]|2000)}}:
// CHECK-NEXT: #0 job {{.*}}thread_per_job_files.c:28
// CHECK:      {{Write|write}} of size 4 at 0x{{[0-9a-f]+}} by thread T{{(199[7-9]|2000)}}:
// CHECK-NEXT: #0 job {{.*}}thread_per_job_files.c:28
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK-NEXT: exit=66
