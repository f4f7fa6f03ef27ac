// SCENARIO: main waits for the loader's "config loaded" signal with a bare pthread_cond_wait
//           that checks no predicate, after first waiting for the cache warm-up the loader does
//           later; the signal is always spent before the wait: the recorded run hangs
// CATEGORY: lost-wakeup
// EXPECT: deadlock 62
// ENDS: hang
// REORDER: no
//
// At startup a loader thread reads the configuration, announces it (sets config_loaded and
// signals config_cv under config_lock) and then warms the cache, posting cache_warm when done.
// main first waits for the warm cache (sem_wait), then for the configuration: it takes
// config_lock and calls pthread_cond_wait once, without the `while (!config_loaded)` loop that
// would see the flag already set. The loader signalled before it posted cache_warm, and main
// waits only after it took cache_warm, so the wakeup is lost in every run, not only in an
// unlucky one: main waits forever, the loader has ended.
//
// The recorded run itself deadlocks (the harness records it with `ilgen run --timeout`, which
// stops it and keeps the trace): ilgen reports the deadlock as observed in that run, main
// blocked in its cond_wait, with the lost wakeup (the loader's signal before main's wait).
//
// Data: the configuration is written by the loader before its signal and its post, and read by
// main after its sem_wait (never reached after the wait). There is no data race.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t config_cv = PTHREAD_COND_INITIALIZER;
static int config_loaded; // under config_lock; main never looks at it (the bug)
static sem_t cache_warm;

static char config_name[32]; // written by the loader before it announces
static int cache_lines[64];  // written by the loader before it posts cache_warm

static void *loader(void *arg) {
  (void)arg;
  strcpy(config_name, "service.conf");
  pthread_mutex_lock(&config_lock);
  config_loaded = 1;
  pthread_cond_signal(&config_cv); // nobody waits yet: the wakeup is spent here
  pthread_mutex_unlock(&config_lock);

  for (int i = 0; i < 64; i++)
    cache_lines[i] = i * 7 % 13;
  sem_post(&cache_warm);
  return NULL;
}

int main(void) {
  pthread_t t;
  sem_init(&cache_warm, 0, 0);
  pthread_create(&t, NULL, loader, NULL);

  sem_wait(&cache_warm); // the cache first: the loader posts it after its signal
  long sum = 0;
  for (int i = 0; i < 64; i++)
    sum += cache_lines[i];

  // The bug: a bare wait, no predicate loop; the signal it waits for was already sent.
  pthread_mutex_lock(&config_lock);
  pthread_cond_wait(&config_cv, &config_lock);
  pthread_mutex_unlock(&config_lock);

  pthread_join(t, NULL);
  printf("%s loaded, cache sum %ld\n", config_name, sum);
  return 0;
}
