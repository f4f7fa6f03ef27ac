// SCENARIO: a loader thread fills a configuration record and publishes it with a release store
//           to an atomic flag; readers spin on an acquire load before using it: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The one-shot publication idiom. The loader writes every field of `config` with plain stores,
// then sets `config_ready` with atomic_store_explicit(..., memory_order_release). Each reader
// spins on atomic_load_explicit(..., memory_order_acquire) until it sees the flag and only then
// reads the fields. The acquire load that reads the released value synchronizes with the store,
// so every plain write of the loader happens before every plain read of the readers.
//
// A careless tool that ignores the atomics (or treats them only as "not racing") sees plain
// writes and plain reads of `config` from different threads with no lock in common and flags
// them. The flag itself is only touched atomically, and the stats each reader fills in are its
// own slot of `seen`, read by main after the joins.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define READERS 2

struct config {
  int port;
  int workers;
  char mode[8];
};

static struct config config;
static atomic_int config_ready;
static int seen[READERS];

static void *loader(void *arg) {
  (void)arg;
  usleep(3000); // "parsing the file": readers are already spinning
  config.port = 8080;
  config.workers = 4;
  snprintf(config.mode, sizeof config.mode, "%s", "fast");
  // Publication point: everything above happens before a reader's acquire load of 1.
  atomic_store_explicit(&config_ready, 1, memory_order_release);
  return NULL;
}

static void *reader(void *arg) {
  int id = (int)(long)arg;
  while (!atomic_load_explicit(&config_ready, memory_order_acquire))
    usleep(100);
  // Safe: ordered after the loader's writes by the release/acquire pair on config_ready.
  int score = config.port / 1000 + config.workers;
  if (config.mode[0] == 'f')
    score += 10;
  seen[id] = score;
  return NULL;
}

int main(void) {
  pthread_t load, rd[READERS];

  for (long i = 0; i < READERS; i++)
    pthread_create(&rd[i], NULL, reader, (void *)i);
  pthread_create(&load, NULL, loader, NULL);
  for (int i = 0; i < READERS; i++)
    pthread_join(rd[i], NULL);
  pthread_join(load, NULL);

  printf("config %d/%d/%s, readers saw", config.port, config.workers, config.mode);
  for (int i = 0; i < READERS; i++)
    printf(" %d", seen[i]);
  printf("\n");
  return 0;
}
