// A pipeline that maps a region per job: main maps an anonymous region, fills it and queues it;
// a worker sums the region in place; the writer reads the sum and unmaps the region. The queues
// are bounded (mutex and condition variables) and the job contents are written and read outside
// every lock, ordered only by the queue hand-offs. The kernel gives main's next mmap an address
// the writer unmapped (checked in the dump: T2 unmapped what T0 mapped again), and nothing
// orders the writer's munmap before main's mmap. Keyed by mapping epoch, one job's accesses never
// pair with a later job's at the same address: 0 candidates in each of 10 recordings, and with
// -static (without mapping epochs the same recordings give hundreds of candidates). Each job also
// maps a page of a file and drops it: a mapping of a file is an object too.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | python3 %S/Inputs/reused.py T2 T0 | FileCheck --check-prefix=REUSED %s
// RUN: %ilgen dump %t.trace | awk -f %S/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: %ilgen cc -g -O0 -static -I %testinc %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | python3 %S/Inputs/reused.py T2 T0 | FileCheck --check-prefix=REUSED %s
// RUN: %ilgen dump %t.strace | awk -f %S/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.sr && env ILGEN_OPTIONS=trace_dir=%t.sr %t.static && %ilgen detect --no-replay %t.sr | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

#include "job_queue.h"

enum { JOBS = 24, SIZE = 64 * 1024 };

struct job {
  int seq;
  unsigned sum;
  unsigned char data[SIZE - 2 * sizeof(int)];
};

struct job_queue todo = JOB_QUEUE_INIT, done = JOB_QUEUE_INIT;
unsigned total;

void *worker(void *arg) {
  struct job *j;
  while ((j = job_queue_get(&todo)) != NULL) {
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof j->data; i += 512)
      sum += j->data[i] + 1u;
    j->sum = sum;
    job_queue_put(&done, j);
  }
  return arg;
}

void *writer(void *arg) {
  for (int n = 0; n < JOBS; n++) {
    struct job *j = job_queue_get(&done);
    total += j->sum + (unsigned)j->seq;
    munmap(j, SIZE);
  }
  return arg;
}

int main(void) {
  int fd = open("/proc/self/exe", O_RDONLY);
  pthread_t w, out;
  pthread_create(&w, NULL, worker, NULL);
  pthread_create(&out, NULL, writer, NULL);
  for (int n = 0; n < JOBS; n++) {
    const unsigned char *file = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    struct job *j = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (j == MAP_FAILED || file == MAP_FAILED)
      return 2;
    j->seq = n;
    for (size_t i = 0; i < sizeof j->data; i += 512)
      j->data[i] = (unsigned char)(n + file[i % 4096]);
    munmap((void *)file, 4096);
    job_queue_put(&todo, j);
  }
  job_queue_close(&todo);
  pthread_join(w, NULL);
  pthread_join(out, NULL);
  close(fd);
  return total == 0;
}

// REUSED: reused {{[1-9][0-9]*}} address(es)

// 24 mappings at main's line and 24 unmaps at the writer's, of 64 KiB; main's 24 of the file.
// EVENTS:      {{^ *}}24 T0 map size=4096 line 69
// EVENTS-NEXT: {{^ *}}24 T0 map size=65536 line 70
// EVENTS-NEXT: {{^ *}}24 T0 unmap size=4096 line 76
// EVENTS-NEXT: {{^ *}}24 T2 unmap size=65536 line 58
// EVENTS-NOT:  {{.}}

// CHECK:     10 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT: {{.}}
