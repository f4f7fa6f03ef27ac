// SCENARIO: a binary semaphore serializes access to a sensor bus; the calibration offset is
//           written before the calibrator's bus transaction and read after the sampler's, unlocked
// CATEGORY: semaphore
// EXPECT: race 40 50
// REORDER: yes
//
// Two threads share an I2C-like bus, serialized by `bus`, a semaphore initialized to 1 and used
// as a lock. The calibrator measures the sensor's zero offset, stores it in `zero_offset` (a
// plain global: "it is written once at start-up") and then talks to the bus to program the
// sensor. The sampler reads a raw sample over the bus and subtracts `zero_offset` after
// releasing the bus. Nothing but the order of the two bus transactions relates the store of the
// offset and its use.
//
// In the natural run the sampler starts late (it waits for the sensor to warm up, a sleep), so
// the calibrator's sem_post comes before the sampler's sem_wait: the post-wait edge orders the
// store before the read and a happens-before detector sees nothing. If the sampler gets the bus
// first, it reads the offset while the calibrator may be storing it (and uses a stale zero):
// the race needs the two bus transactions reordered. The bus counters are only touched while
// holding the semaphore; main prints after the joins.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

static sem_t bus;
static int bus_transactions;
static int zero_offset; // written by the calibrator, read by the sampler: no lock

static int bus_transfer(int reg) {
  sem_wait(&bus);
  bus_transactions++;
  int value = 1000 + reg * 3; // the fake sensor's answer
  sem_post(&bus);
  return value;
}

static void *calibrator(void *arg) {
  (void)arg;
  int measured = 17; // pretend: averaged with the sensor's input shorted
  zero_offset = measured; // RACE: written outside the bus semaphore
  bus_transfer(0x10);     // program the sensor's configuration register
  return NULL;
}

static void *sampler(void *arg) {
  int *samples = arg;
  usleep(20000); // sensor warm-up: timing only
  for (int i = 0; i < 3; i++) {
    int raw = bus_transfer(0x20 + i);
    samples[i] = raw - zero_offset; // RACE: read after releasing the bus semaphore
  }
  return NULL;
}

int main(void) {
  pthread_t c, s;
  int samples[3];
  sem_init(&bus, 0, 1);
  pthread_create(&c, NULL, calibrator, NULL);
  pthread_create(&s, NULL, sampler, samples);
  pthread_join(c, NULL);
  pthread_join(s, NULL);
  printf("%d bus transactions, samples %d %d %d (offset %d)\n", bus_transactions, samples[0],
         samples[1], samples[2], zero_offset);
  sem_destroy(&bus);
  return 0;
}
