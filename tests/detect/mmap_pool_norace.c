// A pipeline that maps a region per job: main maps an anonymous region, fills it and queues it;
// a worker sums the region in place; the writer reads the sum and unmaps the region. The queues
// are bounded (mutex and condition variables) and the job contents are written and read outside
// every lock, ordered only by the queue hand-offs. The kernel gives main's next mmap an address
// the writer unmapped (checked in the dump: T2 unmapped what T0 mapped again), and nothing
// orders the writer's munmap before main's mmap. Keyed by mapping epoch, one job's accesses never
// pair with a later job's at the same address: 0 candidates in each of 10 recordings, and with
// -static (without mapping epochs the same recordings give hundreds of candidates). Each job also
// maps a page of a file and drops it: file-backed mappings are no event.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | python3 %S/Inputs/reused.py T2 T0 | FileCheck --check-prefix=REUSED %s
// RUN: %ilgen dump %t.trace | awk -f %S/Inputs/mappings.awk | FileCheck --check-prefix=EVENTS %s
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: %ilgen cc -g -O0 -static %s -o %t.static 2>/dev/null
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

enum { JOBS = 24, DEPTH = 2, SIZE = 64 * 1024 };

struct job {
  int seq;
  unsigned sum;
  unsigned char data[SIZE - 2 * sizeof(int)];
};

struct queue {
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  struct job *items[DEPTH];
  int head, count, closed;
};

#define QUEUE_INIT                                                                                 \
  { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0 }

struct queue todo = QUEUE_INIT, done = QUEUE_INIT;
unsigned total;

void put(struct queue *q, struct job *j) {
  pthread_mutex_lock(&q->lock);
  while (q->count == DEPTH)
    pthread_cond_wait(&q->not_full, &q->lock);
  q->items[(q->head + q->count) % DEPTH] = j;
  q->count++;
  pthread_cond_signal(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

void close_queue(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = 1;
  pthread_cond_broadcast(&q->not_empty);
  pthread_mutex_unlock(&q->lock);
}

struct job *get(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  while (q->count == 0 && !q->closed)
    pthread_cond_wait(&q->not_empty, &q->lock);
  struct job *j = NULL;
  if (q->count > 0) {
    j = q->items[q->head];
    q->head = (q->head + 1) % DEPTH;
    q->count--;
    pthread_cond_signal(&q->not_full);
  }
  pthread_mutex_unlock(&q->lock);
  return j;
}

void *worker(void *arg) {
  struct job *j;
  while ((j = get(&todo)) != NULL) {
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof j->data; i += 512)
      sum += j->data[i] + 1u;
    j->sum = sum;
    put(&done, j);
  }
  return arg;
}

void *writer(void *arg) {
  for (int n = 0; n < JOBS; n++) {
    struct job *j = get(&done);
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
    put(&todo, j);
  }
  close_queue(&todo);
  pthread_join(w, NULL);
  pthread_join(out, NULL);
  close(fd);
  return total == 0;
}

// REUSED: reused {{[1-9][0-9]*}} address(es)

// 24 mappings at main's line and 24 unmaps at the writer's, of 64 KiB; none for the file.
// EVENTS:      {{^ *}}24 T0 map size=65536 line 110
// EVENTS-NEXT: {{^ *}}24 T2 unmap size=65536 line 98
// EVENTS-NOT:  {{.}}

// CHECK:     10 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT: {{.}}
