// SCENARIO: an appender counts records under stats_lock, a flusher reads the log under log_lock,
//           and main's checkpoint nests both locks; the unlocked last_record is ordered only
//           through that nested critical section
// CATEGORY: cs-order
// EXPECT: race 38 58
// REORDER: yes
//
// A tiny write-ahead log. The appender thread formats a record into `last_record` (no lock: "only
// the flusher reads it, and the flusher runs after the checkpoint") and then counts it in
// `stats` under stats_lock. main's checkpoint takes stats_lock and then log_lock (always in that
// order) and copies the record count into the log header. The flusher takes log_lock to read the
// header and then, outside any lock, copies `last_record` to its output.
//
// The appender and the flusher share no lock; what orders the appender's write of last_record
// with the flusher's read is the chain appender unlock(stats_lock) -> checkpoint lock(stats_lock)
// ... unlock(log_lock) -> flusher lock(log_lock), through main's nested critical section. In the
// natural run the appender is quick, main checkpoints after a short sleep and the flusher starts
// later still, so the chain exists and a happens-before detector sees nothing. If the checkpoint
// takes stats_lock before the appender does, or the flusher takes log_lock before the checkpoint
// does, the write and the read are unordered and the flusher can copy a half-written record.
// Every other shared access is under its lock, before the forks or after the joins.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static char last_record[32];   // written by the appender without a lock
static int records_appended;   // under stats_lock
static int header_records;     // under log_lock: the checkpointed record count

static void *appender(void *arg) {
  int seq = *(int *)arg;
  char rec[32];
  snprintf(rec, sizeof rec, "rec-%04d:balance=%d", seq, seq * 7);
  memcpy(last_record, rec, sizeof rec); // RACE with the flusher's copy
  pthread_mutex_lock(&stats_lock);
  records_appended++;
  pthread_mutex_unlock(&stats_lock);
  return NULL;
}

struct flush_out {
  int header;
  char rec[32];
};

// The flusher reads the header under log_lock but copies the record after releasing it, whether
// or not the header already counts it.
static void *flusher(void *arg) {
  struct flush_out *out = arg;
  usleep(40000); // waits for "the next flush interval"
  pthread_mutex_lock(&log_lock);
  out->header = header_records;
  pthread_mutex_unlock(&log_lock);
  memcpy(out->rec, last_record, sizeof last_record); // RACE with the appender's copy
  return NULL;
}

// The checkpoint: the only code that holds both locks, always stats_lock then log_lock.
static void checkpoint(void) {
  pthread_mutex_lock(&stats_lock);
  pthread_mutex_lock(&log_lock);
  header_records = records_appended;
  pthread_mutex_unlock(&log_lock);
  pthread_mutex_unlock(&stats_lock);
}

int main(void) {
  pthread_t ta, tf;
  int seq = 42;
  struct flush_out flushed = {0, ""};

  if (pthread_create(&ta, NULL, appender, &seq) != 0 ||
      pthread_create(&tf, NULL, flusher, &flushed) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  usleep(20000); // the appender is done by now, or so the author thought
  checkpoint();
  pthread_join(ta, NULL);
  pthread_join(tf, NULL);
  printf("appended %d, checkpointed %d, flushed %d \"%s\"\n", records_appended, header_records,
         flushed.header, flushed.rec);
  return 0;
}
