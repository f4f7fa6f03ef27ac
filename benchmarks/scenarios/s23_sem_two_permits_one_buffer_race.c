// SCENARIO: a semaphore initialised to 2 (two DMA channels) admits two transfers at once, but
//           both stage their data in the one shared bounce buffer: the two transfers race on it
// CATEGORY: semaphore
// EXPECT: race 52 52
// EXPECT: race 52 57
// REORDER: no
//
// A device driver with two DMA channels limits the number of transfers in flight with a counting
// semaphore initialised to the number of channels. That part is right. But a transfer first
// copies the caller's data into a bounce buffer, and there is only one bounce buffer: it was
// written when the hardware had a single channel and the semaphore was binary. With two permits,
// two transfers are inside at once: each fills the bounce buffer (the same line) and then reads
// it back to compute the checksum the device checks. Each fill races with the other transfer's
// fill and with the other transfer's checksum read. A semaphore orders a post before the wait
// it lets through, but here neither transfer waits for the other's post (there are two
// permits), so nothing orders them.
//
// In the natural run the second transfer starts while the first one is still "on the wire" (a
// sleep between the fill and the checksum), so both are inside at the same time and the race is
// there without reordering. Each transfer's result lands in its own element of `sums[]`; main
// compares them after the joins.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#define NCHANNELS 2
#define BOUNCE_LEN 32

static sem_t channels;
static unsigned char bounce[BOUNCE_LEN]; // one buffer for all channels
static unsigned sums[2];

struct transfer {
  int id;
  unsigned char seed;
  int start_delay_us;
};

static unsigned checksum(const unsigned char *p, int n) {
  unsigned s = 0;
  for (int i = 0; i < n; i++)
    s = s * 33 + p[i];
  return s;
}

static void *do_transfer(void *arg) {
  const struct transfer *t = arg;
  usleep(t->start_delay_us);
  sem_wait(&channels); // a channel is free: at most NCHANNELS transfers get here
  for (int i = 0; i < BOUNCE_LEN; i++)
    bounce[i] = (unsigned char)(t->seed + i); // stage the payload in the shared buffer
  usleep(20000);                              // program the channel, wait for the engine
  // The device verifies the payload against this checksum, computed from the bounce buffer.
  unsigned s = 0;
  for (int i = 0; i < BOUNCE_LEN; i++)
    s = s * 33 + bounce[i];
  sums[t->id] = s;
  sem_post(&channels);
  return NULL;
}

int main(void) {
  pthread_t th[2];
  struct transfer tr[2] = {{0, 10, 0}, {1, 200, 2000}};

  sem_init(&channels, 0, NCHANNELS);
  for (int i = 0; i < 2; i++)
    pthread_create(&th[i], NULL, do_transfer, &tr[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);

  int ok = 0;
  for (int i = 0; i < 2; i++) {
    unsigned char expect[BOUNCE_LEN];
    for (int j = 0; j < BOUNCE_LEN; j++)
      expect[j] = (unsigned char)(tr[i].seed + j);
    ok += sums[i] == checksum(expect, BOUNCE_LEN);
  }
  printf("%d of 2 transfers carried the right checksum\n", ok);
  sem_destroy(&channels);
  return 0;
}
