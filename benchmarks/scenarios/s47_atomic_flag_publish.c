// SCENARIO: a calibration thread fills a plain struct and publishes it with an atomic release
//           store of a flag; two measurement threads poll the flag with acquire loads: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Publication through an atomic flag. The calibrator computes the gain and offset of a sensor
// (plain, unlocked writes to `calib`) and then sets `calibrated` with atomic_store_explicit(...,
// memory_order_release). The two measurement threads poll the flag with acquire loads (backing off
// with a short sleep) and, once they see 1, read `calib` with plain loads and no lock. The
// release store comes after every write of `calib` and each reader's successful acquire load
// before its reads, so the writes happen before the reads in every execution; nothing else
// touches `calib`. There is no mutex anywhere, so a tool that orders threads only by locks and
// joins sees unordered plain writes and reads of `calib`. The atomics themselves never race.
//
// In the natural run the calibrator needs 10 ms, so both readers poll a few times before they see
// the flag. The readers' results are their own until main reads them after the joins.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

struct calibration {
  double gain;
  double offset;
  int sensor_id;
};

static struct calibration calib;  // plain data, published by `calibrated`
static atomic_int calibrated;     // 0 until calib is complete
static atomic_int polls;          // statistics: how often the readers had to wait

static void *calibrator(void *arg) {
  (void)arg;
  // Two reference measurements, taken slowly.
  double lo = 0.0, hi = 0.0;
  for (int i = 0; i < 4; i++) {
    usleep(2500);
    lo += 0.25 * (1.0 + 0.01 * i);
    hi += 0.25 * (101.0 + 0.01 * i);
  }
  calib.gain = 100.0 / (hi - lo);
  calib.offset = -lo * calib.gain;
  calib.sensor_id = 7;
  atomic_store_explicit(&calibrated, 1, memory_order_release); // publish
  return NULL;
}

struct measurement {
  int raw[3];
  double value[3];
  int sensor_id;
};

static void *measurer(void *arg) {
  struct measurement *m = arg;
  while (!atomic_load_explicit(&calibrated, memory_order_acquire)) {
    atomic_fetch_add_explicit(&polls, 1, memory_order_relaxed);
    usleep(1000);
  }
  // calib is complete and visible: plain reads, no lock.
  for (int i = 0; i < 3; i++)
    m->value[i] = calib.gain * m->raw[i] + calib.offset;
  m->sensor_id = calib.sensor_id;
  return NULL;
}

int main(void) {
  static struct measurement m1 = {{2, 51, 101}, {0}, 0};
  static struct measurement m2 = {{26, 76, 11}, {0}, 0};
  pthread_t c, r1, r2;

  pthread_create(&c, NULL, calibrator, NULL);
  pthread_create(&r1, NULL, measurer, &m1);
  pthread_create(&r2, NULL, measurer, &m2);
  pthread_join(c, NULL);
  pthread_join(r1, NULL);
  pthread_join(r2, NULL);

  printf("sensor %d: %.1f %.1f %.1f | sensor %d: %.1f %.1f %.1f (readers polled: %s)\n",
         m1.sensor_id, m1.value[0], m1.value[1], m1.value[2], m2.sensor_id, m2.value[0],
         m2.value[1], m2.value[2], atomic_load(&polls) > 0 ? "yes" : "no");
  return 0;
}
