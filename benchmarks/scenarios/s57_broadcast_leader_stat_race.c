// SCENARIO: a cache reload broadcast wakes three shard workers; each adds its reloaded entries to
//           a shared statistic under the lock, except the first one woken, which takes a "fast
//           path" and adds its count without the lock: that update races with the others'
// CATEGORY: condvar
// EXPECT: race 57 60
// REORDER: no
//
// main publishes a new configuration generation under reload_lock and broadcasts reload_cv. The
// three shard workers wait with `while (generation == 0) pthread_cond_wait(...)` and, still
// holding the lock after the wait, take a wake-up rank (`woken++`). Each rebuilds its own shard
// outside the lock and then accounts the number of entries in `reloaded_entries`. The author
// reasoned that the first worker woken "is alone for a while, the others are still queued on the
// lock", so rank 0 adds its count without taking reload_lock; ranks 1 and 2 take the lock.
//
// The reasoning is wrong: the ranks only order the wake-ups, not the reloads. The leader's
// unlocked update comes after its last unlock of reload_lock, so nothing orders it with the
// locked updates of the other two workers, whichever order they run in: the race is visible in
// the natural run (one pair of lines: the leader's update and the locked update). An update can
// be lost and the total comes out short. The generation, the ranks and the shards themselves
// (one per worker, written after the wake-up, read by main after the joins) are race-free.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define SHARDS 3
#define SHARD_SLOTS 64

static pthread_mutex_t reload_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reload_cv = PTHREAD_COND_INITIALIZER;
static int generation;         // under reload_lock
static int woken;              // under reload_lock
static long reloaded_entries;  // under reload_lock, except on the leader's fast path

static int shard[SHARDS][SHARD_SLOTS];

// Rebuilds one shard for generation gen; returns the number of live entries.
static long rebuild(int id, int gen) {
  long live = 0;
  for (int i = 0; i < SHARD_SLOTS; i++) {
    shard[id][i] = (i * (id + 3) + gen) % 5 == 0 ? 0 : i + 100 * id;
    live += shard[id][i] != 0;
  }
  return live;
}

static void *shard_worker(void *arg) {
  int id = (int)(long)arg;
  pthread_mutex_lock(&reload_lock);
  while (generation == 0)
    pthread_cond_wait(&reload_cv, &reload_lock);
  int gen = generation;
  int rank = woken++;
  pthread_mutex_unlock(&reload_lock);

  long n = rebuild(id, gen);
  if (rank == 0) {
    reloaded_entries += n; // RACE: the leader's "fast path" without the lock
  } else {
    pthread_mutex_lock(&reload_lock);
    reloaded_entries += n; // RACE: the other workers' update, under the lock
    pthread_mutex_unlock(&reload_lock);
  }
  return NULL;
}

int main(void) {
  pthread_t t[SHARDS];

  for (long i = 0; i < SHARDS; i++)
    if (pthread_create(&t[i], NULL, shard_worker, (void *)i) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  usleep(5000); // all three workers are parked on reload_cv by now
  pthread_mutex_lock(&reload_lock);
  generation = 7;
  pthread_cond_broadcast(&reload_cv);
  pthread_mutex_unlock(&reload_lock);

  for (int i = 0; i < SHARDS; i++)
    pthread_join(t[i], NULL);
  long expect = 0;
  for (int s = 0; s < SHARDS; s++)
    for (int i = 0; i < SHARD_SLOTS; i++)
      expect += shard[s][i] != 0;
  printf("generation %d: %ld entries reloaded (expected %ld)\n", generation, reloaded_entries,
         expect);
  return 0;
}
