// SCENARIO: main detaches an uploader thread and, instead of synchronizing with it, sleeps "long
//           enough" before reading the upload result: the sleep orders nothing
// CATEGORY: detached
// EXPECT: race 40 59
// EXPECT: race 41 60
// REORDER: no
//
// At shutdown the program uploads its metrics in the background: main creates the uploader,
// detaches it (so it cannot join it later), and then waits 30 ms, "which is always plenty", before
// printing how many bytes were sent and the status. The uploader stores `sent_bytes` and then
// `upload_status` as plain globals. usleep is not a synchronization operation: on a loaded
// machine the upload can still be running when main reads, and even when it is done nothing in
// the memory model orders the stores before the loads. Each of the two results is a race.
//
// In the natural run the upload does finish within the sleep, but the recorded run contains no
// synchronization between the uploader's stores and main's loads (the only edge is the create,
// which comes before both), so the races are visible as recorded. The metrics buffer is filled by
// main before the create and only read by the uploader: ordered by the create.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char metrics[128];
static long sent_bytes;
static int upload_status; // 0: not done, 1: ok, -1: failed

static long fake_send(const char *buf, size_t len) {
  long sent = 0;
  for (size_t off = 0; off < len; off += 16) // "send" in 16-byte packets
    sent += (long)(len - off < 16 ? len - off : 16);
  (void)buf;
  return sent;
}

static void *uploader(void *arg) {
  (void)arg;
  size_t len = strlen(metrics);
  long n = fake_send(metrics, len);
  sent_bytes = n; // RACE: main reads it after a mere sleep
  upload_status = n == (long)len ? 1 : -1; // RACE: likewise
  return NULL;
}

int main(void) {
  pthread_t up;
  snprintf(metrics, sizeof metrics, "requests=%d errors=%d p99_ms=%d uptime_s=%d", 1234, 5, 87,
           3600);

  if (pthread_create(&up, NULL, uploader, NULL) != 0) {
    fprintf(stderr, "cannot start the uploader\n");
    return 1;
  }
  pthread_detach(up);

  // BUG: a sleep instead of a join, a semaphore or a condition variable.
  usleep(30000);

  long bytes = sent_bytes;   // RACE: unordered with the uploader's store
  int status = upload_status; // RACE: likewise
  printf("upload %s, %ld bytes of %zu\n", status == 1 ? "ok" : status == 0 ? "not done" : "failed",
         bytes, strlen(metrics));
  return 0;
}
