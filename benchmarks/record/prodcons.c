/* prodcons.c -- recording-overhead workload: a lock-heavy producer/consumer.
 *
 * Stresses: synchronization events. Two producers and two consumers share one bounded ring
 * buffer (capacity 16) guarded by one mutex and two condition variables (not_full, not_empty),
 * waited on in the usual while-loops. Every item costs a lock/unlock pair on each side, a
 * signal, and often a wait, while the work per item outside the lock is tiny; so the run is
 * dominated by mutex, condition-variable and thread-switch operations, each of which ilgen
 * records as a sync event with a global sequence number.
 *
 * Usage: prodcons [ITEMS]   items per producer (default 200000).
 * Output: item count and sum, identical for every build and every schedule.
 * Race-free: the ring, its indices and the per-consumer totals are touched only under the mutex
 * (totals are per-consumer and read by main after join).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NPRODUCERS 2
#define NCONSUMERS 2
#define CAPACITY 16

static struct {
  pthread_mutex_t lock;
  pthread_cond_t not_full;
  pthread_cond_t not_empty;
  long items[CAPACITY];
  unsigned head, tail, count;
  int producers_left;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
       {0}, 0, 0, 0, NPRODUCERS};

static long items_per_producer;

struct consumer {
  pthread_t thread;
  long taken;
  long long sum;
};

static void *produce(void *arg) {
  long base = (long)(size_t)arg * 1000003L;
  for (long i = 0; i < items_per_producer; i++) {
    long item = base + (i * 7919L) % 100003L; /* a little work outside the lock */
    pthread_mutex_lock(&q.lock);
    while (q.count == CAPACITY)
      pthread_cond_wait(&q.not_full, &q.lock);
    q.items[q.tail] = item;
    q.tail = (q.tail + 1) % CAPACITY;
    q.count++;
    pthread_cond_signal(&q.not_empty);
    pthread_mutex_unlock(&q.lock);
  }
  pthread_mutex_lock(&q.lock);
  q.producers_left--;
  pthread_cond_broadcast(&q.not_empty); /* wake consumers so they can see the end */
  pthread_mutex_unlock(&q.lock);
  return NULL;
}

static void *consume(void *arg) {
  struct consumer *c = arg;
  for (;;) {
    pthread_mutex_lock(&q.lock);
    while (q.count == 0 && q.producers_left > 0)
      pthread_cond_wait(&q.not_empty, &q.lock);
    if (q.count == 0) { /* empty and no producer left */
      pthread_mutex_unlock(&q.lock);
      return NULL;
    }
    long item = q.items[q.head];
    q.head = (q.head + 1) % CAPACITY;
    q.count--;
    pthread_cond_signal(&q.not_full);
    c->taken++;
    c->sum += item;
    pthread_mutex_unlock(&q.lock);
  }
}

int main(int argc, char **argv) {
  items_per_producer = argc > 1 ? atol(argv[1]) : 200000;
  if (items_per_producer <= 0) {
    fprintf(stderr, "usage: %s [ITEMS>0]\n", argv[0]);
    return 2;
  }
  pthread_t producers[NPRODUCERS];
  struct consumer consumers[NCONSUMERS] = {{0}};
  for (int i = 0; i < NCONSUMERS; i++)
    if (pthread_create(&consumers[i].thread, NULL, consume, &consumers[i]) != 0)
      return 1;
  for (int i = 0; i < NPRODUCERS; i++)
    if (pthread_create(&producers[i], NULL, produce, (void *)(size_t)(i + 1)) != 0)
      return 1;
  for (int i = 0; i < NPRODUCERS; i++)
    pthread_join(producers[i], NULL);
  long taken = 0;
  long long sum = 0;
  for (int i = 0; i < NCONSUMERS; i++) {
    pthread_join(consumers[i].thread, NULL);
    taken += consumers[i].taken;
    sum += consumers[i].sum;
  }
  printf("prodcons items=%ld taken=%ld sum=%lld\n", items_per_producer * NPRODUCERS, taken, sum);
  return taken == items_per_producer * NPRODUCERS ? 0 : 1;
}
