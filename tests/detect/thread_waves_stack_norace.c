// Threads created and joined in waves, each publishing the address of a local on its own stack
// through a shared slot under a mutex; main reads the locals through the slots while the threads
// wait at a barrier, then lets them finish and joins them. glibc hands a joined thread's stack
// (and its TLS block) to the next wave's thread, so the same addresses hold the locals of many
// threads (the program checks that it saw an address again): nothing is paired across waves or
// within one, 0 candidates in each of 10 recordings, and with -static.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.reuse && env ILGEN_OPTIONS=trace_dir=%t.reuse %t | FileCheck --check-prefix=REUSED %s
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t >/dev/null && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: %ilgen cc -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.sr && env ILGEN_OPTIONS=trace_dir=%t.sr %t.static >/dev/null && %ilgen detect --no-replay %t.sr | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
#include <pthread.h>
#include <stdio.h>

enum { WAVES = 6, WIDTH = 3 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int *slot[WIDTH];
static int seen[WAVES * WIDTH];
static pthread_barrier_t published, consumed;

static void *publish(void *arg) {
  int id = (int)(long)arg;
  int local = id * 10;
  pthread_mutex_lock(&lock);
  slot[id % WIDTH] = &local;
  local += 1;
  pthread_mutex_unlock(&lock);
  pthread_barrier_wait(&published);
  pthread_barrier_wait(&consumed);
  return NULL;
}

int main(void) {
  int *first[WIDTH] = {0};
  int reused = 0;
  pthread_barrier_init(&published, NULL, WIDTH + 1);
  pthread_barrier_init(&consumed, NULL, WIDTH + 1);
  for (int wave = 0; wave < WAVES; wave++) {
    pthread_t t[WIDTH];
    for (int i = 0; i < WIDTH; i++)
      pthread_create(&t[i], NULL, publish, (void *)(long)(wave * WIDTH + i));
    pthread_barrier_wait(&published);
    for (int i = 0; i < WIDTH; i++) {
      pthread_mutex_lock(&lock);
      int *p = slot[i];
      pthread_mutex_unlock(&lock);
      seen[wave * WIDTH + i] = *p;
      if (wave == 0)
        first[i] = p;
      else
        for (int k = 0; k < WIDTH; k++)
          reused += p == first[k];
    }
    pthread_barrier_wait(&consumed);
    for (int i = 0; i < WIDTH; i++)
      pthread_join(t[i], NULL);
  }
  printf("stack addresses reused: %s\n", reused > 0 ? "yes" : "no");
  return seen[WAVES * WIDTH - 1] != (WAVES * WIDTH - 1) * 10 + 1;
}

// REUSED: stack addresses reused: yes

// CHECK:     10 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NOT: {{.}}
