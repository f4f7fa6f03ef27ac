// SCENARIO: request statistics where the count and the total are atomics but the maximum latency
//           is a plain int updated with a check-then-store: the maximum races, the rest does not
// CATEGORY: atomics
// EXPECT: race 43 44
// EXPECT: race 44 44
// REORDER: no
//
// Two request handlers record each request's latency. The author made `count` and `total_us`
// atomic (atomic_fetch_add) and believed the statistics thread-safe, but `max_us` is a plain int
// updated with `if (lat > max_us) max_us = lat;`. The read in the check and the store are two
// separate plain accesses: a handler can read an old maximum while the other stores a new one,
// and the two stores can overwrite each other (a larger maximum lost). The atomics never race
// with each other, so only the maximum's check (a read) and store (a write) are reported: the
// check of one thread against the store of the other, and the two threads' stores.
//
// In the natural run the second handler starts a little later and sees larger latencies, so
// both handlers store a new maximum. The seq_cst fetch_adds do order the first handler's earlier
// calls before the second's, but not the first handler's last check and store, which come after
// its last fetch_add: the races are visible as recorded. main reads after the joins.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define REQUESTS 4

static atomic_long count;
static atomic_long total_us;
static int max_us; // BUG: not atomic, and the update is not a single atomic operation

struct handler {
  int base_us;
  int step_us;
};

static int serve(const struct handler *h, int i) {
  return h->base_us + i * h->step_us; // a fake, deterministic latency
}

static void record(int lat) {
  atomic_fetch_add(&count, 1);
  atomic_fetch_add(&total_us, lat);
  if (lat > max_us) // RACE: plain read of the maximum
    max_us = lat;   // RACE: plain write of the maximum
}

static void *handler_main(void *arg) {
  const struct handler *h = arg;
  if (h->base_us > 100)
    usleep(30000); // the slow backend answers later: timing only
  for (int i = 0; i < REQUESTS; i++)
    record(serve(h, i));
  return NULL;
}

int main(void) {
  struct handler fast = {50, 10}, slow = {400, 25};
  pthread_t a, b;
  pthread_create(&a, NULL, handler_main, &fast);
  pthread_create(&b, NULL, handler_main, &slow);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  long n = atomic_load(&count);
  printf("%ld requests, mean %ld us, max %d us\n", n, atomic_load(&total_us) / n, max_us);
  return 0;
}
