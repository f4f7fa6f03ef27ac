// SCENARIO: a non-blocking event log: when pthread_mutex_trylock fails the event is dropped and
//           counted in `dropped` without the lock, racing with a reporter that reads it under it
// CATEGORY: trylock
// EXPECT: race 47 76
// REORDER: yes
//
// log_event() must never block its caller (it is called from a latency-sensitive worker), so it
// only tries the log lock: on success the event is appended under the lock, on failure it is
// dropped and the loss is counted in `dropped`. That fallback path skips the lock, yet `dropped`
// is also read by the reporter thread under the lock: the author assumed the lock protects it.
// A failed trylock acquires nothing, so nothing orders the worker's increment with the reporter.
//
// In the natural run main holds the log lock for a long time while rotating the log file, the
// worker's first three events arrive during the rotation (every trylock fails, `dropped` goes to
// 3), its next three arrive after it and are logged under the lock, and the reporter looks only
// at the very end. The worker's later successful critical section releases the lock after its
// increments, and the reporter's critical section acquires it: that unlock-lock edge orders the
// increments before the reporter's read and a happens-before detector sees no race. If the
// reporter's critical section comes before the worker's first successful one (the reporter is a
// little early, or the worker late), the read and the increments are unordered. The appends to
// log_buf and log_len are all under the lock; the final printf comes after the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define LOG_CAP 32

static int log_buf[LOG_CAP];
static int log_len;
static int archived;
static long dropped; // events lost because the log was busy
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

struct report {
  long dropped;
  int pending;
};

// Never blocks: either the event goes into the buffer, or it is counted as dropped.
static void log_event(int code) {
  if (pthread_mutex_trylock(&log_lock) == 0) {
    if (log_len < LOG_CAP)
      log_buf[log_len++] = code;
    pthread_mutex_unlock(&log_lock);
  } else {
    // The fallback path: the lock is busy, so it is not held here. Races with the reporter.
    dropped++;
  }
}

// Archives the buffer. Holds the lock across the slow part (flushing to disk).
static void log_rotate(void) {
  pthread_mutex_lock(&log_lock);
  usleep(100000); // write and fsync the old file
  archived += log_len;
  log_len = 0;
  pthread_mutex_unlock(&log_lock);
}

static void *worker(void *arg) {
  (void)arg;
  usleep(30000); // the first burst arrives during the rotation
  for (int i = 0; i < 3; i++)
    log_event(100 + i);
  usleep(100000); // the second burst arrives after it
  for (int i = 0; i < 3; i++)
    log_event(200 + i);
  return NULL;
}

static void *reporter(void *arg) {
  struct report *r = arg;
  usleep(250000); // periodic statistics, long after both bursts
  pthread_mutex_lock(&log_lock);
  r->pending = log_len;
  r->dropped = dropped; // read under the lock, but the writer never takes it
  pthread_mutex_unlock(&log_lock);
  return NULL;
}

int main(void) {
  pthread_t w, rep;
  struct report r = {0, 0};

  pthread_create(&w, NULL, worker, NULL);
  pthread_create(&rep, NULL, reporter, &r);
  log_rotate();
  pthread_join(w, NULL);
  pthread_join(rep, NULL);
  printf("archived %d, pending %d, dropped %ld (reporter saw %ld dropped, %d pending)\n", archived,
         log_len, dropped, r.dropped, r.pending);
  return 0;
}
