// Barrier-separated phases: each of three workers writes its own slot, all meet at a
// pthread_barrier, each reads its neighbours' slots and writes its own result, all meet again,
// and then worker 0 alone sums the results. Every cross-thread access pair is ordered only by a
// barrier (no mutex at all), so ilgen must order each barrier instance's arrivals before its
// departures and find no candidate.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>

enum { N = 3 };

pthread_barrier_t phase;
int slot[N];
int result[N];
int total;

void *worker(void *arg) {
  int i = (int)(long)arg;
  slot[i] = i + 1;
  pthread_barrier_wait(&phase);
  result[i] = slot[(i + 1) % N] + slot[(i + 2) % N];
  pthread_barrier_wait(&phase);
  if (i == 0)
    for (int j = 0; j < N; j++)
      total += result[j];
  return NULL;
}

int main(void) {
  pthread_t t[N];
  pthread_barrier_init(&phase, NULL, N);
  for (long i = 0; i < N; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < N; i++)
    pthread_join(t[i], NULL);
  pthread_barrier_destroy(&phase);
  return total == 12 ? 0 : 1;
}

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK-NEXT:   trace: 4 threads,
// Slots, results and total are shared and written; only barriers (and the joins) order them. So
// is the barrier itself, which main destroys after the joins: every wait is ordered before it.
// CHECK-NEXT:   shared objects: 7 (0 without a conflicting pair, 7 removed by happens-before, 0 by lockset, 0 left)
// CHECK-NOT:  candidate 1
// CHECK:      exit=0

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
