// The round's serial thread destroys the barrier, as libuv's barrier_serial_thread test does: four
// workers and main wait on one barrier six times, and whichever thread gets
// PTHREAD_BARRIER_SERIAL_THREAD in the last round destroys it while the others may still be
// leaving their waits. glibc's pthread_barrier_destroy waits for them to leave, so the destroy
// races with nothing: 0 candidates. Before, every other thread's return from its last wait was a
// use of the barrier that no order put before the destroy, and the replay confirmed a "data race
// on destroyed sync object" between the two (2 of 3 recordings of this test).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <unistd.h>

enum { WORKERS = 4, ROUNDS = 6 };

pthread_barrier_t barrier;
int destroyed;

static void rounds(void) {
  for (int i = 0; i < ROUNDS - 1; i++)
    pthread_barrier_wait(&barrier);
  if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
    pthread_barrier_destroy(&barrier);
    __atomic_fetch_add(&destroyed, 1, __ATOMIC_RELAXED);
  }
}

void *worker(void *arg) {
  rounds();
  usleep(20 * 1000);
  return arg;
}

int main(void) {
  pthread_t t[WORKERS];
  pthread_barrier_init(&barrier, NULL, WORKERS + 1);
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  rounds();
  for (int i = 0; i < WORKERS; i++)
    pthread_join(t[i], NULL);
  return destroyed != 1;
}

// CHECK:     ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s)
// CHECK:     exit=0
