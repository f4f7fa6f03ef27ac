// SCENARIO: a receive ring guarded by a pthread spin lock; the rx thread adds each packet's length
//           to rx_bytes before taking the lock, the stats thread reads rx_bytes under the lock
// CATEGORY: spinlock
// EXPECT: race 46 63
// REORDER: yes
//
// A network driver's receive path. The rx thread takes packets off the "wire" and enqueues their
// lengths in a ring; ring, head and tail are protected by ring_lock, a pthread spin lock, and the
// statistics thread samples the ring depth and the byte counter inside the same lock. But the rx
// path accounts each packet in rx_bytes as soon as it arrives, before it takes the spin lock: the
// counter is read under the lock and written outside it.
//
// In the natural run the statistics thread starts late (a sleep), after the rx thread has
// enqueued its whole burst; the rx thread's last spin_unlock and the stats thread's spin_lock then
// order every rx_bytes update before the sample, and a happens-before detector sees nothing. If
// the statistics thread takes the lock between two of the rx thread's critical sections, the
// next packet's rx_bytes update (made before that packet's lock) is unordered with the sample:
// the sample can see a torn or stale total. The ring itself is only touched under the lock, and
// main drains it after joining both threads.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define RING_SIZE 16
#define BURST 8

static int ring[RING_SIZE];
static unsigned head, tail; // tail: next slot to fill; head: next slot to drain
static long rx_bytes;
static pthread_spinlock_t ring_lock;

struct sample {
  unsigned depth;
  long bytes;
};

static int wire_packet_len(int n) {
  return 64 + (n * 97) % 1400;
}

static void *rx_thread(void *arg) {
  int *enqueued = arg;
  for (int n = 0; n < BURST; n++) {
    int len = wire_packet_len(n);
    // The accounting happens when the packet arrives, outside the lock.
    rx_bytes += len;
    pthread_spin_lock(&ring_lock);
    if (tail - head < RING_SIZE) {
      ring[tail % RING_SIZE] = len;
      tail++;
      (*enqueued)++;
    }
    pthread_spin_unlock(&ring_lock);
  }
  return NULL;
}

static void *stats_thread(void *arg) {
  struct sample *s = arg;
  usleep(30000); // the sampling period: in the natural run the whole burst is in by now
  pthread_spin_lock(&ring_lock);
  s->depth = tail - head;
  s->bytes = rx_bytes; // under the lock, but the rx path does not write it under the lock
  pthread_spin_unlock(&ring_lock);
  return NULL;
}

int main(void) {
  pthread_t rx, st;
  int enqueued = 0;
  struct sample s = {0, 0};

  pthread_spin_init(&ring_lock, PTHREAD_PROCESS_PRIVATE);
  pthread_create(&rx, NULL, rx_thread, &enqueued);
  pthread_create(&st, NULL, stats_thread, &s);
  pthread_join(rx, NULL);
  pthread_join(st, NULL);

  long drained = 0;
  while (head != tail)
    drained += ring[head++ % RING_SIZE];
  printf("enqueued %d packets, drained %ld bytes, rx_bytes %ld, stats: depth %u, %ld bytes\n",
         enqueued, drained, rx_bytes, s.depth, s.bytes);
  pthread_spin_destroy(&ring_lock);
  return 0;
}
