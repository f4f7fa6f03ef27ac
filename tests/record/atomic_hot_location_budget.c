// A location two threads hand over 140,000 times (a reference count, say) stops ordering
// anything once its stripe has had 65,536 releases recorded: the rest of its operations are
// recorded as relaxed ones (no acquire or release record, no lock). Without the budget each
// hand-over wrote its release: 140,000 release records here, 193 MB of trace for 4 threads
// copying one std::shared_ptr 10^6 times (benchmarks/record/refcount.cpp). The count and the
// check are under the stripe's lock; a release taken back when the same thread's next one
// replaced it (no one acquired it in between) was counted too, so a few less than 65,536 may stay.
//
// RUN: %ilgen cc -g -O1 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | grep -c ' release_rmw ' | FileCheck --check-prefix=BUDGET %s
// BUDGET: {{^65[0-5][0-9][0-9]$}}
#include <pthread.h>
#include <stdatomic.h>

#define TURNS 70000

static atomic_int count;

static void *worker(void *arg) {
  int me = (int)(long)arg;
  for (int i = 0; i < TURNS; i++) {
    while (atomic_load_explicit(&count, memory_order_acquire) % 2 != me)
      ;
    atomic_fetch_add_explicit(&count, 1, memory_order_acq_rel);
  }
  return NULL;
}

int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  return atomic_load(&count) != 2 * TURNS;
}
