// SCENARIO: a configuration store under a rwlock: readers only read it under the read lock and
//           count their reads with an atomic, a reloader rewrites it under the write lock
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The correct counterpart of the routing-table counter bug. Three reader threads repeatedly take
// a snapshot of `cfg` under the read lock: several readers are often inside at the same time,
// but they only read, so they cannot race with one another. The number of snapshots taken is
// counted with an atomic fetch-add (atomics never race with atomics), not with a plain ++ as in
// the buggy version. Each reader checks that the snapshot is consistent (the checksum matches the
// values) and keeps its tally in its own element of `tally[]`: neighbouring elements, distinct
// bytes, each written by one thread only. The reloader thread rewrites the whole configuration
// under the write lock, which excludes every reader, so a reader sees either the old or the new
// version but never half of each. main reads the tallies after joining every thread.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define READERS 3
#define SNAPSHOTS 40

struct config {
  int version;
  int timeout_ms;
  int retries;
  int checksum;
};

static struct config cfg;
static pthread_rwlock_t cfg_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_long snapshots_taken;
static int tally[READERS]; // consistent snapshots seen, one element per reader

static int cfg_sum(int version, int timeout_ms, int retries) {
  return version * 31 + timeout_ms * 7 + retries;
}

static void cfg_store(int version, int timeout_ms, int retries) {
  pthread_rwlock_wrlock(&cfg_lock);
  cfg.version = version;
  cfg.timeout_ms = timeout_ms;
  cfg.retries = retries;
  cfg.checksum = cfg_sum(version, timeout_ms, retries);
  pthread_rwlock_unlock(&cfg_lock);
}

static void *reader(void *arg) {
  int id = *(const int *)arg;
  for (int i = 0; i < SNAPSHOTS; i++) {
    pthread_rwlock_rdlock(&cfg_lock);
    struct config snap = cfg; // read only, under the read lock
    atomic_fetch_add(&snapshots_taken, 1);
    pthread_rwlock_unlock(&cfg_lock);
    if (snap.checksum == cfg_sum(snap.version, snap.timeout_ms, snap.retries))
      tally[id]++; // this reader's own element
    if (i % 10 == 9)
      usleep(200);
  }
  return NULL;
}

static void *reloader(void *arg) {
  (void)arg;
  for (int v = 2; v <= 4; v++) {
    usleep(500);
    cfg_store(v, 100 * v, v + 1);
  }
  return NULL;
}

int main(void) {
  pthread_t rd[READERS], rl;
  int ids[READERS];

  cfg_store(1, 100, 2);
  for (int i = 0; i < READERS; i++) {
    ids[i] = i;
    pthread_create(&rd[i], NULL, reader, &ids[i]);
  }
  pthread_create(&rl, NULL, reloader, NULL);
  for (int i = 0; i < READERS; i++)
    pthread_join(rd[i], NULL);
  pthread_join(rl, NULL);

  int consistent = 0;
  for (int i = 0; i < READERS; i++)
    consistent += tally[i];
  printf("%ld snapshots, %d consistent, final config version %d\n",
         atomic_load(&snapshots_taken), consistent, cfg.version);
  return 0;
}
