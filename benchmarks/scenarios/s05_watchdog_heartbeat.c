// SCENARIO: a worker stamps its heartbeat time without a lock and then counts the beat under a
//           lock; the watchdog reads the count under the lock but the time outside it
// CATEGORY: cs-order
// EXPECT: race 45 61
// REORDER: yes
//
// A supervisor pattern. After each unit of work the worker records when it was last alive
// (`last_beat_ms`, a plain store) and then increments `beats` under hb_lock. The watchdog takes
// hb_lock to read `beats`, releases it, and then computes the age of the last heartbeat from
// `last_beat_ms` with no lock: the author thought the locked counter made the pair consistent,
// but only `beats` is protected. A heartbeat stamped while the watchdog computes the age is a
// data race (on a 32-bit target the 64-bit stamp can even be torn).
//
// In the natural run the watchdog's first check comes after the worker's last beat (the watchdog
// sleeps first): the worker's unlock after each stamp and the watchdog's later lock order every
// stamp before the watchdog's read, so a happens-before detector sees nothing. When the
// watchdog's critical section comes before the worker's last one, the stamp written just before
// that critical section and the watchdog's read are unordered: the race must be predicted by
// moving the watchdog's critical section earlier.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define UNITS 3
#define STALL_MS 500

static long long last_beat_ms;
static int beats;
static pthread_mutex_t hb_lock = PTHREAD_MUTEX_INITIALIZER;

// A fake monotonic clock: deterministic output, and no system call that could synchronize.
static long long fake_now_ms(int tick) { return 1000LL + 10LL * tick; }

static long do_unit(int n) {
  long acc = 0;
  for (int i = 0; i < 1000; i++)
    acc += (i * n) % 7;
  return acc;
}

static void *worker(void *arg) {
  long *out = arg;
  for (int u = 0; u < UNITS; u++) {
    *out += do_unit(u + 1);
    last_beat_ms = fake_now_ms(u); // RACE: unlocked stamp, written before the locked count
    pthread_mutex_lock(&hb_lock);
    beats++;
    pthread_mutex_unlock(&hb_lock);
  }
  return NULL;
}

static void *watchdog(void *arg) {
  int *stalled = arg;
  usleep(20000); // first check after a grace period: timing only
  int seen;
  pthread_mutex_lock(&hb_lock);
  seen = beats;
  pthread_mutex_unlock(&hb_lock);
  // The age is computed from a stamp that the lock above does not protect.
  long long age = fake_now_ms(UNITS) - last_beat_ms; // RACE: unlocked read of the stamp
  *stalled = seen == 0 || age > STALL_MS;
  return NULL;
}

int main(void) {
  pthread_t w, d;
  long work = 0;
  int stalled = 0;
  pthread_create(&w, NULL, worker, &work);
  pthread_create(&d, NULL, watchdog, &stalled);
  pthread_join(w, NULL);
  pthread_join(d, NULL);
  printf("work %ld, %d beats, watchdog says %s\n", work, beats, stalled ? "stalled" : "alive");
  return 0;
}
