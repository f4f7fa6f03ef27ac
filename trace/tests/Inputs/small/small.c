// A small program recorded by ilgen-rt; trace/tests/fuzz.rs mutates its trace (this directory).
// Recorded in /tmp/ilgen-small with: ilgen cc -g -O0 small.c -o small &&
// ILGEN_OPTIONS=trace_dir=trace ./small, then trace/{meta.json,t*.trace} copied here unchanged
// (the run was sealed at exit: meta.json lists each file's length and checksum).
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t started;
static int counter, shared;

static void *work(void *arg) {
  // Both threads alive at once: neither takes over the other's file, one file each.
  pthread_barrier_wait(&started);
  pthread_mutex_lock(&m);
  counter += (int)(long)arg;
  pthread_mutex_unlock(&m);
  shared = 1;
  return NULL;
}

int main(void) {
  pthread_t t[2];
  pthread_barrier_init(&started, NULL, 2);
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, work, (void *)(i + 1));
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  printf("%d\n", counter);
  return 0;
}
