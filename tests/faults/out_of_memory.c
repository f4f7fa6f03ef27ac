// Memory running out in the analyzer is exit 2 with one message naming the trace and what to
// lower, never an abort (SIGABRT, "memory allocation of N bytes failed") or a Rust backtrace.
// `ilgen dump` reads the trace under a 60000 KiB address-space limit. Since detect's model events
// shrank to 16 bytes, its analysis of this trace fits in about 43 MiB as well, so it gets
// 30000 KiB (it gives the same message from 42000 down to 20000). The threads take an rwlock,
// so that detect builds the model: a run of mutexes alone with no race left the screen clears
// without one, in a few MiB (analysis/src/screen.rs).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c 'ulimit -v 60000 && %ilgen dump %t.trace > /dev/null; echo "exit=$?"' 2>&1 | FileCheck --check-prefix=READ %s
// READ: exit=0
// RUN: sh -c 'ulimit -v 30000 && %ilgen detect %t.trace; echo "exit=$?"' 2>&1 \
// RUN:   | FileCheck --check-prefix=DETECT --implicit-check-not=panicked --implicit-check-not=backtrace --implicit-check-not="memory allocation" %s
// DETECT:      ilgen: error: out of memory while analysing {{.*}}out_of_memory.c.tmp.trace; lower --window or --max-states, or record a shorter run
// DETECT-NEXT: exit=2
#include <pthread.h>

#define THREADS 4
#define ROUNDS 20000

pthread_rwlock_t m = PTHREAD_RWLOCK_INITIALIZER;
long counter;
long cells[THREADS][64];

static void *work(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < ROUNDS; i++) {
    pthread_rwlock_wrlock(&m);
    counter++;
    pthread_rwlock_unlock(&m);
    cells[id][i % 64]++;
  }
  return 0;
}

int main(void) {
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++)
    pthread_create(&t[i], 0, work, (void *)i);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], 0);
  return 0;
}
