// SCENARIO: a request-latency statistics module updated under stats_lock by a worker; the reset
//           path memsets the statistics without taking the lock (it only locks to count resets)
// CATEGORY: memcpy-memset
// EXPECT: race 52 43
// EXPECT: race 52 44
// EXPECT: race 52 45
// REORDER: yes
//
// main serves a few warm-up requests itself, then discards their statistics with stats_reset()
// so that only the worker's steady-state requests are reported. Every update of `stats` goes
// through stats_add(), which holds stats_lock. stats_reset() was later extended to count the
// resets under the lock, but its memset of `stats` stayed outside the critical section.
//
// In the natural run the worker starts slowly (it "connects" first, a short sleep), so main's
// reset, including its locked reset counter, is over before the worker's first stats_add: the
// unlock-lock edge on stats_lock orders the memset before every worker update and a
// happens-before detector sees nothing. When the worker's first request is accounted before
// main's reset (worker's critical section first), the memset runs concurrently with that update:
// the count, the total and the maximum (each field of `stats`, lines of stats_add) can be wiped
// half-way or survive the reset. main's warm-up updates and the reset counter are all under the
// lock; the report at the end comes after the join.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WARMUP_REQUESTS 4
#define WORKER_REQUESTS 8

struct latency_stats {
  long count;
  long total_us;
  long max_us;
};

static struct latency_stats stats;
static long resets;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

// Every update path takes the lock.
static void stats_add(long latency_us) {
  pthread_mutex_lock(&stats_lock);
  stats.count++;
  stats.total_us += latency_us;
  if (latency_us > stats.max_us) stats.max_us = latency_us;
  pthread_mutex_unlock(&stats_lock);
}

// The reset path: the memset is outside the critical section, so it races with any stats_add
// that another thread runs concurrently.
static void stats_reset(void) {
  memset(&stats, 0, sizeof stats);
  pthread_mutex_lock(&stats_lock);
  resets++;
  pthread_mutex_unlock(&stats_lock);
}

// A deterministic "request": latency derived from the request number.
static long serve(unsigned id) {
  unsigned h = id * 2654435761u;
  return 100 + (long)(h % 900);
}

static void *worker(void *arg) {
  unsigned base = *(unsigned *)arg;
  usleep(30000); // connection set-up: main's warm-up and reset usually finish first
  for (unsigned i = 0; i < WORKER_REQUESTS; i++)
    stats_add(serve(base + i));
  return NULL;
}

int main(void) {
  pthread_t t;
  unsigned base = 1000;

  if (pthread_create(&t, NULL, worker, &base) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  for (unsigned i = 0; i < WARMUP_REQUESTS; i++)
    stats_add(serve(i));
  stats_reset(); // drop the warm-up figures
  pthread_join(t, NULL);

  long expect_total = 0;
  for (unsigned i = 0; i < WORKER_REQUESTS; i++)
    expect_total += serve(base + i);
  printf("requests %ld, mean %ld us, max %ld us, resets %ld (%s)\n", stats.count,
         stats.count ? stats.total_us / stats.count : 0, stats.max_us, resets,
         stats.total_us == expect_total ? "consistent" : "warm-up leaked or updates lost");
  return 0;
}
