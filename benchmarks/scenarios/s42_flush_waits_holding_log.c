// SCENARIO: a flush waits on a condition variable for pending I/O while holding the log lock; the
//           I/O thread must take the log lock (to log the write) before it can signal completion
// CATEGORY: deadlock
// EXPECT: deadlock 52 82
// REORDER: yes
//
// A storage engine writes one block on an I/O thread. The I/O thread first appends "write
// started" to the shared log (under log_lock), then performs the write, then sets io_done and
// signals io_cond under io_mutex. main flushes: to keep its "flush started ... flush done" records
// adjacent in the log it takes log_lock for the whole flush, and inside it waits for io_done with
// the usual predicate loop around pthread_cond_wait. pthread_cond_wait releases io_mutex, but not
// log_lock: if main takes log_lock before the I/O thread has logged its start, main waits for a
// signal that can only come after the I/O thread gets log_lock, and the I/O thread waits for
// log_lock, which main holds. main is stuck in pthread_cond_wait, the I/O thread in
// pthread_mutex_lock.
//
// In the natural run main begins its flush 30 ms late, after the I/O thread has logged and
// released log_lock, so main waits (holding log_lock) and the I/O thread's signal 30 ms later
// wakes it. A reordering of the recorded operations, main's lock of log_lock first, exposes the
// deadlock; the wait loop is correct, so no signal is lost: the error is the lock held across
// the wait.
//
// Data: the log is written under log_lock, io_done under io_mutex, the block is written by the
// I/O thread and read by main after the join. There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[256]; // under log_lock
static int log_records;    // under log_lock

static pthread_mutex_t io_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t io_cond = PTHREAD_COND_INITIALIZER;
static int io_done; // under io_mutex

static char disk_block[64];

// Caller holds log_lock.
static void log_line(const char *s) {
  size_t len = strlen(log_text);
  if (len + strlen(s) + 2 < sizeof log_text) {
    strcat(log_text, s);
    strcat(log_text, "\n");
  }
  log_records++;
}

static void *io_thread(void *arg) {
  const char *data = arg;
  pthread_mutex_lock(&log_lock); // the I/O thread blocks here while main waits
  log_line("io: write of block 7 started");
  pthread_mutex_unlock(&log_lock);

  usleep(60000); // the device write
  strncpy(disk_block, data, sizeof disk_block - 1);

  pthread_mutex_lock(&io_mutex);
  io_done = 1;
  pthread_cond_signal(&io_cond);
  pthread_mutex_unlock(&io_mutex);
  return NULL;
}

int main(void) {
  static char data[] = "commit record 42";
  pthread_t io;

  if (pthread_create(&io, NULL, io_thread, data) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  usleep(30000); // the flush is requested a little later in the natural run

  // Flush: the log stays locked from "flush started" to "flush done" (the bug: also across the
  // wait for the I/O thread, which needs log_lock first).
  pthread_mutex_lock(&log_lock);
  log_line("flush: waiting for pending I/O");
  pthread_mutex_lock(&io_mutex);
  while (!io_done)
    pthread_cond_wait(&io_cond, &io_mutex); // main blocks here, still holding log_lock
  pthread_mutex_unlock(&io_mutex);
  log_line("flush: done");
  pthread_mutex_unlock(&log_lock);

  pthread_join(io, NULL);
  printf("%s%d log record(s); block: %s\n", log_text, log_records, disk_block);
  return 0;
}
