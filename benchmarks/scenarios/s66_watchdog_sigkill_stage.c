// SCENARIO: a job thread records its stage in a plain field after its last lock and then stalls;
//           a watchdog reads the stage for its log line and kills the process with SIGKILL
// CATEGORY: killed
// EXPECT: race 46 60
// ENDS: killed
// REORDER: no
//
// A batch runner guards a job with a watchdog. The job reports that it started (under
// status_lock, with a signal the watchdog waits for), then sets `stage` to "uploading" without
// the lock, and stalls in the upload. The watchdog waits for the start, gives the job its
// deadline, reads `stage` for the message it prints, and kills the whole process with SIGKILL,
// the way an overrun job is put down: no atexit handler, no flush, no thread gets to end. main
// is still blocked in its join.
//
// The job's write of `stage` and the watchdog's read are both in the last segment of their
// threads (after their last sync operation; the kill, the job's sleep and the print are none),
// and neither thread ever reaches another sync operation that would flush the segment. The
// runtime keeps every thread's current segment where the kill cannot lose it, so the recorded
// run shows the race and ilgen must still find it from the trace of a process that died by
// SIGKILL.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define DEADLINE_US 100000

enum { STAGE_QUEUED, STAGE_STARTED, STAGE_UPLOADING };

static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t status_cv = PTHREAD_COND_INITIALIZER;
static int started; // under status_lock
static int stage;   // the job's progress, written and read without status_lock
static long checksum;

static void *job(void *arg) {
  (void)arg;
  for (int i = 0; i < 1000; i++)
    checksum += i * 31 % 7;
  pthread_mutex_lock(&status_lock);
  started = 1;
  stage = STAGE_STARTED;
  pthread_cond_signal(&status_cv);
  pthread_mutex_unlock(&status_lock);

  stage = STAGE_UPLOADING; // RACE: after the job's last sync operation
  sleep(30);               // the upload stalls past any deadline
  return NULL;
}

static void *watchdog(void *arg) {
  (void)arg;
  pthread_mutex_lock(&status_lock);
  while (!started)
    pthread_cond_wait(&status_cv, &status_lock);
  pthread_mutex_unlock(&status_lock);

  usleep(DEADLINE_US);
  // The deadline passed: log where the job is stuck and put the whole process down.
  int seen = stage; // RACE: the watchdog's unlocked read
  fprintf(stderr, "watchdog: job overran its deadline at stage %d, killing\n", seen);
  kill(getpid(), SIGKILL);
  return NULL;
}

int main(void) {
  pthread_t j, w;
  pthread_create(&w, NULL, watchdog, NULL);
  pthread_create(&j, NULL, job, NULL);
  pthread_join(j, NULL); // never returns: the watchdog kills the process first
  pthread_join(w, NULL);
  printf("job done, checksum %ld\n", checksum);
  return 0;
}
