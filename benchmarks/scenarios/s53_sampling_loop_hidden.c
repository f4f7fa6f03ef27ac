// SCENARIO: a sensor thread runs 40 locked accumulations and stores each raw sample in
//           last_sample just before its critical section; a display loop reads last_sample after
//           each of its own critical sections: the race is hidden when the loops do not overlap
// CATEGORY: cs-order
// EXPECT: race 49 65
// REORDER: yes
//
// The sensor thread produces SAMPLES readings. For each it stores the raw value in `last_sample`
// (for the display's "current reading" field, deliberately without the lock because "it is just
// one int") and then adds it to the running sum and count under meter_lock. The display thread
// refreshes FRAMES times: it takes meter_lock to compute the average, releases it, and then shows
// `last_sample` as the current reading.
//
// In the natural run the display starts late (a short sleep) and the sensor's whole loop of
// critical sections is over before the display's first one: every store of last_sample precedes
// the sensor's next unlock, which precedes the display's first lock, so all reads are ordered
// after all writes and a happens-before detector sees nothing. As soon as any display critical
// section comes before the sensor's last one (the loops interleave, as they would with a slower
// sensor), the store of iteration i and the read after that critical section are unordered: the
// display can show a torn or stale reading. Sum and count are always accessed under the lock;
// the final report is after the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define SAMPLES 40
#define FRAMES 10

static pthread_mutex_t meter_lock = PTHREAD_MUTEX_INITIALIZER;
static long sum;   // under meter_lock
static int count;  // under meter_lock
static int last_sample; // no lock

struct frame {
  int avg;
  int current;
};

// A deterministic "ADC reading": a slow triangle wave with a little noise.
static int read_adc(int i) {
  int tri = i % 16 < 8 ? i % 16 : 16 - i % 16;
  return 500 + tri * 20 + (i * 37) % 5;
}

static void *sensor(void *arg) {
  (void)arg;
  for (int i = 0; i < SAMPLES; i++) {
    int v = read_adc(i);
    last_sample = v; // RACE with the display's read
    pthread_mutex_lock(&meter_lock);
    sum += v;
    count++;
    pthread_mutex_unlock(&meter_lock);
  }
  return NULL;
}

static void *display(void *arg) {
  struct frame *frames = arg;
  usleep(40000); // the screen comes up after the sensor has warmed up
  for (int f = 0; f < FRAMES; f++) {
    pthread_mutex_lock(&meter_lock);
    frames[f].avg = count ? (int)(sum / count) : 0;
    pthread_mutex_unlock(&meter_lock);
    frames[f].current = last_sample; // RACE with the sensor's store
  }
  return NULL;
}

int main(void) {
  pthread_t ts, td;
  struct frame frames[FRAMES] = {{0, 0}};

  if (pthread_create(&ts, NULL, sensor, NULL) != 0 ||
      pthread_create(&td, NULL, display, frames) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(ts, NULL);
  pthread_join(td, NULL);
  for (int f = 0; f < FRAMES; f += 3)
    printf("frame %d: avg %d current %d\n", f, frames[f].avg, frames[f].current);
  printf("%d samples, final average %ld\n", count, count ? sum / count : 0);
  return 0;
}
