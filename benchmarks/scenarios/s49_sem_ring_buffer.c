// SCENARIO: a single-producer single-consumer ring buffer of 4 slots guarded by two counting
//           semaphores (free slots, filled slots) and no mutex: slot reuse is ordered, race-free
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The textbook bounded buffer with semaphores. `slots_free` starts at 4 and `slots_full` at 0.
// The producer waits for a free slot, writes the sample into ring[in] and posts `slots_full`; the
// consumer waits for a full slot, reads ring[out] and posts `slots_free`. With one producer and
// one consumer each index is private to its thread, so no mutex is needed: a slot's write happens
// before its read (the producer's post of slots_full precedes the consumer's wait that takes it)
// and a slot's read happens before it is overwritten with the sample 4 positions later (the
// consumer's post of slots_free precedes the producer's wait that takes it). The ring holds fewer
// slots than there are samples, so every slot is written and read several times by two threads
// holding no lock at all; a lockset-based tool reports all of them.
//
// In the natural run the consumer is slower (1 ms per sample), so the producer fills the ring and
// then blocks on slots_free. The consumer's results are its own until main reads them after the
// joins.
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>

#define SLOTS 4
#define SAMPLES 10

struct sample {
  int seq;
  int millivolts;
};

static struct sample ring[SLOTS];
static sem_t slots_free, slots_full;

static void *producer(void *arg) {
  (void)arg;
  int in = 0; // the producer's index, private to it
  for (int i = 0; i < SAMPLES; i++) {
    sem_wait(&slots_free);
    ring[in].seq = i;
    ring[in].millivolts = 3300 - 7 * i * i;
    sem_post(&slots_full);
    in = (in + 1) % SLOTS;
  }
  return NULL;
}

struct stats {
  long sum;
  int min, max;
  int in_order;
};

static void *consumer(void *arg) {
  struct stats *st = arg;
  int out = 0; // the consumer's index, private to it
  st->min = 1 << 30;
  st->max = -(1 << 30);
  st->in_order = 1;
  for (int i = 0; i < SAMPLES; i++) {
    sem_wait(&slots_full);
    struct sample s = ring[out];
    sem_post(&slots_free);
    out = (out + 1) % SLOTS;
    if (s.seq != i)
      st->in_order = 0;
    st->sum += s.millivolts;
    if (s.millivolts < st->min)
      st->min = s.millivolts;
    if (s.millivolts > st->max)
      st->max = s.millivolts;
    usleep(1000); // processing: slower than the producer
  }
  return NULL;
}

int main(void) {
  static struct stats st;
  pthread_t p, c;

  sem_init(&slots_free, 0, SLOTS);
  sem_init(&slots_full, 0, 0);
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, &st);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  sem_destroy(&slots_free);
  sem_destroy(&slots_full);

  printf("%d samples %s, sum %ld mV, min %d mV, max %d mV\n", SAMPLES,
         st.in_order ? "in order" : "OUT OF ORDER", st.sum, st.min, st.max);
  return 0;
}
