// SCENARIO: a capture thread memcpy's a new sensor frame into the shared frame buffer while a
//           monitor thread reads one sample of it with no lock: the read races with the memcpy
// CATEGORY: memcpy-memset
// EXPECT: race 55 71
// REORDER: no
//
// A small acquisition pipeline. main prepares a staging frame of 64 samples (a ramp), then starts
// a capture thread that publishes the staging frame into the shared `frame` with one memcpy, and
// a monitor thread that samples frame[FRAME_PROBE] to decide whether the sensor is saturated.
// The capture thread's copy is a range write over the whole of `frame`; the monitor's read of
// one element falls inside that range and nothing orders the two: no lock, no flag, no join
// between them. Depending on timing the monitor sees the old sample (0) or the new one. In the
// natural run the capture thread waits a little for its sensor and the probe comes first; no
// synchronization operation separates the two accesses, so the recorded run shows the race as it
// is and no reordering is needed to expose it.
//
// Only the two accesses to `frame` race: staging is written by main before both threads exist
// (ordered by the creates), the monitor's verdict is its own local until main joins it, and the
// final checksum is computed after both joins.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FRAME_LEN 64
#define FRAME_PROBE 17
#define SATURATION 1000

static int staging[FRAME_LEN];
static int frame[FRAME_LEN];

struct monitor_result {
  int sample;
  int saturated;
};

static void make_ramp(int *buf, int n, int start, int step) {
  for (int i = 0; i < n; i++)
    buf[i] = start + i * step;
}

static long checksum(const int *buf, int n) {
  long sum = 0;
  for (int i = 0; i < n; i++)
    sum = sum * 31 + buf[i];
  return sum;
}

// Publishes the staged frame. The copy writes all of `frame` without any synchronization: the
// author assumed the monitor only looks after capture is finished, but nothing makes it wait.
static void *capture(void *arg) {
  (void)arg;
  // Pretend to wait for the sensor's DMA to finish a little, as the real driver would.
  usleep(2000);
  memcpy(frame, staging, sizeof frame);
  return NULL;
}

static void *monitor(void *arg) {
  struct monitor_result *res = arg;
  int s = 0;
  // Check a few derived thresholds first: local work only.
  int limits[4];
  for (int i = 0; i < 4; i++)
    limits[i] = SATURATION / (i + 1);
  int limit = limits[0];
  for (int i = 1; i < 4; i++)
    if (limits[i] > limit)
      limit = limits[i];
  // Unsynchronized probe of one sample of the shared frame: races with capture's memcpy.
  s = frame[FRAME_PROBE];
  res->sample = s;
  res->saturated = s >= limit;
  return NULL;
}

int main(void) {
  pthread_t cap, mon;
  struct monitor_result res = {0, 0};

  make_ramp(staging, FRAME_LEN, 100, 25);
  if (pthread_create(&cap, NULL, capture, NULL) != 0 ||
      pthread_create(&mon, NULL, monitor, &res) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(cap, NULL);
  pthread_join(mon, NULL);

  long sum = checksum(frame, FRAME_LEN);
  printf("frame checksum %ld, probe sample %d (%s), monitor says %s\n", sum, res.sample,
         res.sample == 0 ? "stale" : "fresh", res.saturated ? "saturated" : "in range");
  return 0;
}
