// Strings made by strdup and asprintf (allocated inside libc) in one thread, handed over through
// a mutex-and-condition-variable queue and read and freed by another; the producer's next strings
// reuse the freed memory (one arena, and glibc's per-thread cache off through GLIBC_TUNABLES, so
// that a string freed by the consumer goes back to the arena). Each string is its own object: nothing is reported, with or
// without -static.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env GLIBC_TUNABLES=glibc.malloc.tcache_count=0 ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | python3 %S/Inputs/reused.py T1 T0 | FileCheck --check-prefix=REUSED %s
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -static %s -o %t.static 2>/dev/null
// RUN: rm -rf %t.strace && env GLIBC_TUNABLES=glibc.malloc.tcache_count=0 ILGEN_OPTIONS=trace_dir=%t.strace %t.static
// RUN: %ilgen dump %t.strace | python3 %S/Inputs/reused.py T1 T0 | FileCheck --check-prefix=REUSED %s
// RUN: sh -c '%ilgen detect --no-replay %t.strace; echo "exit=$?"' | FileCheck %s
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STRINGS = 12 };

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
char *slot;
size_t total;

void *consumer(void *arg) {
  for (int n = 0; n < STRINGS; n++) {
    pthread_mutex_lock(&m);
    while (slot == NULL)
      pthread_cond_wait(&changed, &m);
    char *s = slot;
    slot = NULL;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&m);
    total += strlen(s);
    free(s);
  }
  return arg;
}

int main(void) {
  mallopt(M_ARENA_MAX, 1);
  pthread_t t;
  pthread_create(&t, NULL, consumer, NULL);
  for (int n = 0; n < STRINGS; n++) {
    char *s;
    if (n % 2) {
      s = strdup("a string made by strdup");
    } else if (asprintf(&s, "string %d made by asprintf", n) < 0) {
      return 1;
    }
    pthread_mutex_lock(&m);
    while (slot != NULL)
      pthread_cond_wait(&changed, &m);
    slot = s;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&m);
  }
  pthread_join(t, NULL);
  return total == 0;
}

// REUSED: reused {{[1-9][0-9]*}} address(es)

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK:      exit=0
