// SCENARIO: a single-producer single-consumer ring buffer guarded by two counting semaphores
//           (free slots, filled slots) and no mutex: race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The classic bounded buffer with semaphores. The producer waits for a free slot, writes the
// slot with plain stores and posts `filled`; the consumer waits on `filled`, reads the slot and
// posts `free_slots`. There is no lock around the ring at all, which is what makes a lockset
// tool complain. Yet every slot write is ordered before the read of the same slot (post filled
// -> wait filled), and every read before the next write of that slot, RING items later (post
// free_slots -> wait free_slots): with RING = 4 and 12 messages each slot is reused three times.
// Each index is private to one side (`head` to the producer, `tail` to the consumer).
//
// The producer is slower than the consumer in the natural run, so the consumer mostly waits
// on an empty ring; but no order of the semaphore operations lets two accesses to one slot
// overlap, so there is nothing to find in any schedule.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#define RING 4
#define MESSAGES 12

struct msg {
  int seq;
  int payload;
};

static struct msg ring[RING];
static sem_t free_slots, filled;

static void *producer(void *arg) {
  (void)arg;
  int head = 0;
  for (int i = 0; i < MESSAGES; i++) {
    usleep(300); // "read a sensor"
    sem_wait(&free_slots);
    ring[head].seq = i;
    ring[head].payload = i * i + 7;
    sem_post(&filled);
    head = (head + 1) % RING;
  }
  return NULL;
}

static void *consumer(void *arg) {
  long *checksum = arg;
  int tail = 0, last = -1;
  for (int i = 0; i < MESSAGES; i++) {
    sem_wait(&filled);
    int seq = ring[tail].seq;
    int payload = ring[tail].payload;
    sem_post(&free_slots);
    tail = (tail + 1) % RING;
    if (seq != last + 1)
      fprintf(stderr, "out of order: %d after %d\n", seq, last);
    last = seq;
    *checksum += payload;
  }
  return NULL;
}

int main(void) {
  pthread_t p, c;
  long checksum = 0;
  sem_init(&free_slots, 0, RING);
  sem_init(&filled, 0, 0);
  pthread_create(&c, NULL, consumer, &checksum);
  pthread_create(&p, NULL, producer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  printf("checksum %ld\n", checksum);
  sem_destroy(&free_slots);
  sem_destroy(&filled);
  return 0;
}
