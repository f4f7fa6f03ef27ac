// SCENARIO: two producers hand heap-allocated log records to a writer thread through a queue
//           guarded by a mutex and a condition variable; payloads are written and read unlocked
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// Ownership transfer through a queue. A producer allocates a record, fills in its payload with no
// lock held (the record is still private to it), then appends the record to the queue under
// q_lock and signals `nonempty`; it never touches the record again. The writer thread removes a
// record under q_lock (waiting in a predicate loop while the queue is empty and producers are
// still running) and reads the payload after releasing the lock. The producer's unlock after the
// append and the writer's lock before the removal order the payload writes before the reads, in
// every interleaving; the payload is never shared by two threads at once. A lockset-based tool
// sees payload writes and reads under no common lock and would report them.
//
// Records are kept by the writer and freed by main after the joins (so no address is reused while
// the threads run). In the natural run the writer starts first and waits; producer 1 sends three
// records 5 ms apart and producer 2 starts 15 ms late. The totals are the same in every order.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct record {
  int source;
  int seq;
  long value;
  struct record *next;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static struct record *q_head, *q_tail; // under q_lock
static int producers_left = 2;         // under q_lock

static void enqueue(struct record *r) {
  pthread_mutex_lock(&q_lock);
  r->next = NULL;
  if (q_tail)
    q_tail->next = r;
  else
    q_head = r;
  q_tail = r;
  pthread_cond_signal(&nonempty);
  pthread_mutex_unlock(&q_lock);
}

static void *producer(void *arg) {
  int id = (int)(long)arg;
  usleep(id == 1 ? 0 : 15000);
  for (int i = 0; i < 3; i++) {
    struct record *r = malloc(sizeof *r);
    r->source = id; // payload: written while the record is private to the producer
    r->seq = i;
    r->value = 100L * id + i;
    enqueue(r); // ownership passes to the writer here
    usleep(5000);
  }
  pthread_mutex_lock(&q_lock);
  producers_left--;
  pthread_cond_broadcast(&nonempty);
  pthread_mutex_unlock(&q_lock);
  return NULL;
}

struct totals {
  int records[3];
  long sum;
  struct record *kept; // every record written, freed by main
};

static void *writer(void *arg) {
  struct totals *t = arg;
  for (;;) {
    pthread_mutex_lock(&q_lock);
    while (!q_head && producers_left > 0)
      pthread_cond_wait(&nonempty, &q_lock);
    struct record *r = q_head;
    if (r) {
      q_head = r->next;
      if (!q_head)
        q_tail = NULL;
    }
    pthread_mutex_unlock(&q_lock);
    if (!r)
      break; // queue drained and every producer done
    t->records[r->source]++; // payload read after the unlock: the record is ours now
    t->sum += r->value * (r->seq + 1);
    r->next = t->kept;
    t->kept = r;
  }
  return NULL;
}

int main(void) {
  static struct totals totals;
  pthread_t w, p1, p2;

  pthread_create(&w, NULL, writer, &totals);
  pthread_create(&p1, NULL, producer, (void *)1L);
  pthread_create(&p2, NULL, producer, (void *)2L);
  pthread_join(p1, NULL);
  pthread_join(p2, NULL);
  pthread_join(w, NULL);

  printf("records from producer 1: %d, producer 2: %d, weighted sum %ld\n", totals.records[1],
         totals.records[2], totals.sum);
  for (struct record *r = totals.kept, *next; r; r = next) {
    next = r->next;
    free(r);
  }
  return 0;
}
