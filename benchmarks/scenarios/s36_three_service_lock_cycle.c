// SCENARIO: three service threads each nest two of three locks (log->stats, stats->config,
//           config->log): no pair is inverted, but the three orders close a cycle
// CATEGORY: deadlock
// EXPECT: deadlock 49 65 83 101
// REORDER: yes
//
// A small daemon with three subsystems, each with its own lock. The logger writes a status line
// and, holding log_lock, takes stats_lock to copy the request counters into it. The statistics
// sampler, holding stats_lock, takes config_lock to read the sampling interval. The config
// reloader, holding config_lock, takes log_lock to log that the configuration changed. Each pair of
// threads is consistent (no two threads take the same two locks in opposite orders), so a review
// of any two code paths finds nothing; the lock graph log -> stats -> config -> log is a cycle all
// the same. When each thread holds its first lock at the same time, each waits for the next
// thread's lock (the inner pthread_mutex_lock of each of the three functions) and main waits in
// its first pthread_join.
//
// In the natural run the sampler and the reloader start 30 and 60 ms late, so the three critical
// sections run one after the other and the program finishes. A reordering of the recorded lock
// operations (all three outer locks first) exposes the three-thread deadlock.
//
// Data: log_lines, requests, samples, interval and generation are each accessed only under their
// own lock; the results are printed after the joins. There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

static char log_buf[256]; // under log_lock
static int log_len;       // under log_lock
static long requests = 42; // under stats_lock
static int samples;        // under stats_lock
static int interval_ms = 100; // under config_lock
static int generation;        // under config_lock

static void log_append(const char *line) {
  int n = snprintf(log_buf + log_len, sizeof log_buf - (size_t)log_len, "%s\n", line);
  if (n > 0 && log_len + n < (int)sizeof log_buf)
    log_len += n;
}

// Logger: a status line with the current counters. Order: log_lock, then stats_lock.
static void *logger(void *arg) {
  (void)arg;
  char line[64];
  pthread_mutex_lock(&log_lock);
  pthread_mutex_lock(&stats_lock); // blocked here: the sampler holds stats_lock
  snprintf(line, sizeof line, "status: %ld requests, %d samples", requests, samples);
  pthread_mutex_unlock(&stats_lock);
  log_append(line);
  pthread_mutex_unlock(&log_lock);
  return NULL;
}

// Sampler: takes one sample at the configured interval. Order: stats_lock, then config_lock.
static void *sampler(void *arg) {
  (void)arg;
  usleep(30000);
  pthread_mutex_lock(&stats_lock);
  requests += 8;
  samples++;
  int every;
  pthread_mutex_lock(&config_lock); // blocked here: the reloader holds config_lock
  every = interval_ms;
  pthread_mutex_unlock(&config_lock);
  if (every < 50)
    samples++; // a fast interval takes a second sample
  pthread_mutex_unlock(&stats_lock);
  return NULL;
}

// Reloader: installs a new configuration and logs it. Order: config_lock, then log_lock.
static void *reloader(void *arg) {
  (void)arg;
  usleep(60000);
  char line[64];
  pthread_mutex_lock(&config_lock);
  interval_ms = 250;
  generation++;
  snprintf(line, sizeof line, "config: generation %d, interval %d ms", generation, interval_ms);
  pthread_mutex_lock(&log_lock); // blocked here: the logger holds log_lock
  log_append(line);
  pthread_mutex_unlock(&log_lock);
  pthread_mutex_unlock(&config_lock);
  return NULL;
}

int main(void) {
  pthread_t t[3];
  void *(*fns[3])(void *) = {logger, sampler, reloader};

  for (int i = 0; i < 3; i++) {
    if (pthread_create(&t[i], NULL, fns[i], NULL) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 1;
    }
  }
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL); // main is stuck in the first join when the cycle closes

  fputs(log_buf, stdout);
  printf("requests %ld, samples %d, generation %d\n", requests, samples, generation);
  return 0;
}
