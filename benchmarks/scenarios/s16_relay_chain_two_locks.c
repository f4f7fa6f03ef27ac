// SCENARIO: a three-stage pipeline (ingest, relay, publish) with one lock per hand-off; the ingest
//           stage's unlocked batch label reaches the publisher only through the relay's two
//           successive critical sections, so a different lock order exposes the race
// CATEGORY: cs-order
// EXPECT: race 46 72
// REORDER: yes
//
// ingest fills a batch, stores its human-readable label in `batch_label` without a lock and then
// posts the batch size to the relay under in_lock. relay takes in_lock to collect the size,
// releases it, and in a second, separate critical section on out_lock hands the size on to the
// publisher. publish takes out_lock to read the size and then, outside the lock, formats its
// report with `batch_label`.
//
// No lock is shared by ingest and publish: the write of the label and its read are ordered only
// by the chain ingest unlock(in_lock) -> relay lock(in_lock), relay's program order, relay
// unlock(out_lock) -> publish lock(out_lock). In the natural run the three stages start staggered
// (short sleeps), each critical section comes after the previous stage's, and a happens-before
// detector sees nothing. If the relay's in_lock section comes before ingest's, or the publisher's
// out_lock section before the relay's, the label is read while it may still be written. The
// batch data itself goes through the locked counters; the report is printed after the joins.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t in_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static char batch_label[24]; // no lock: "the publisher runs last anyway"
static int in_count;         // under in_lock
static int out_count;        // under out_lock

struct report {
  int count;
  char label[24];
};

static void *ingest(void *arg) {
  int batch = *(int *)arg;
  int n = 0;
  for (int i = 0; i < 100; i++)
    if ((i * batch) % 7 == 3)
      n++;
  char label[24];
  snprintf(label, sizeof label, "batch-%d", batch);
  memcpy(batch_label, label, sizeof label); // RACE with publish's read
  pthread_mutex_lock(&in_lock);
  in_count = n;
  pthread_mutex_unlock(&in_lock);
  return NULL;
}

// Two separate critical sections, one per lock: never both held at once.
static void *relay(void *arg) {
  (void)arg;
  usleep(30000); // "the batch is in by now"
  pthread_mutex_lock(&in_lock);
  int n = in_count;
  pthread_mutex_unlock(&in_lock);
  pthread_mutex_lock(&out_lock);
  out_count = n;
  pthread_mutex_unlock(&out_lock);
  return NULL;
}

static void *publish(void *arg) {
  struct report *r = arg;
  usleep(60000); // "the relay has handed it on by now"
  pthread_mutex_lock(&out_lock);
  r->count = out_count;
  pthread_mutex_unlock(&out_lock);
  memcpy(r->label, batch_label, sizeof r->label); // RACE with ingest's copy
  return NULL;
}

int main(void) {
  pthread_t ti, tr, tp;
  int batch = 17;
  struct report rep = {0, ""};

  if (pthread_create(&ti, NULL, ingest, &batch) != 0 ||
      pthread_create(&tr, NULL, relay, NULL) != 0 ||
      pthread_create(&tp, NULL, publish, &rep) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(ti, NULL);
  pthread_join(tr, NULL);
  pthread_join(tp, NULL);
  printf("published %s with %d items (ingested %d)\n", rep.label, rep.count, in_count);
  return 0;
}
