// Two event loops, one after the other at the same address: each thread maps a page of its own
// file (a memfd, MAP_SHARED, as libuv's loops map their io_uring rings), bumps the ring's tail in
// it, reads it back and unmaps it. The second thread asks for the first one's address
// (MAP_FIXED_NOREPLACE) and retries until the kernel gives it, which it does only once the first
// thread unmapped its page: nothing in the program orders the two threads, the kernel's mapping
// does. The page the second thread writes is a new object, not the first thread's page: 0
// candidates. Before file mappings were heap events, the two threads' writes of `tail` were a race
// candidate, and its replay confirmed it (libuv's test threadpool_multiple_event_loops: a data
// race at linux.c's `(*ctl->sqtail)++` between two loops that never shared a ring).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | python3 %S/Inputs/reused.py T1 T2 | FileCheck --check-prefix=REUSED %s
// RUN: %ilgen dump %t.trace | awk -f %S/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define RING ((void *)(uintptr_t)0x100000000000ull)

struct ring {
  unsigned head, tail;
  unsigned entries[64];
};

unsigned sums[2];

void *loop(void *arg) {
  int id = (int)(intptr_t)arg;
  int fd = memfd_create("ring", 0);
  if (fd < 0 || ftruncate(fd, 4096) != 0)
    return (void *)1;
  struct ring *r;
  while ((r = mmap(RING, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0)) ==
         MAP_FAILED) {
    if (errno != EEXIST)
      return (void *)1;
    usleep(1000);
  }
  for (unsigned i = 0; i < 32; i++)
    r->entries[r->tail++ & 63] = i;
  sums[id] = r->tail;
  if (id == 0)
    usleep(50 * 1000);
  munmap(r, 4096);
  close(fd);
  return NULL;
}

int main(void) {
  pthread_t t[2];
  pthread_create(&t[0], NULL, loop, (void *)0);
  usleep(10 * 1000);
  pthread_create(&t[1], NULL, loop, (void *)1);
  void *r0, *r1;
  pthread_join(t[0], &r0);
  pthread_join(t[1], &r1);
  return r0 || r1 || sums[0] != 32 || sums[1] != 32;
}

// REUSED: reused 1 address(es)

// EVENTS:      {{^ *}}1 T1 map size=4096 line 38
// EVENTS-NEXT: {{^ *}}1 T1 unmap size=4096 line 49
// EVENTS-NEXT: {{^ *}}1 T2 map size=4096 line 38
// EVENTS-NEXT: {{^ *}}1 T2 unmap size=4096 line 49
// EVENTS-NOT:  {{.}}

// CHECK:     ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK:     exit=0
