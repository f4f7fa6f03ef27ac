// SCENARIO: a sender hands packets to a transmit thread through a mutex/condvar queue, but stamps
//           each packet's queue time after the enqueue: the stamp races with the transmitter's read
// CATEGORY: heap
// EXPECT: race 59 90
// REORDER: yes
//
// The look-alike of s46 with the ownership rule broken. The sender allocates a packet, fills it,
// appends it to the transmit queue (under q_lock, signalling `nonempty`) and only then records in
// the packet when it was queued (pkt->queued_at), because "the time spent in enqueue() should not
// count". But once the packet is in the queue it belongs to the transmit thread, which may already
// have taken it and read queued_at to compute the queueing latency: the sender's write after the
// enqueue and the transmitter's read after its dequeue are not ordered by anything.
//
// In the natural run the transmitter starts 30 ms late. By then the sender has queued all three
// packets and closed the queue (each stamp is followed by the sender's next lock of q_lock, and
// the last one by the close), and the transmitter's first lock of q_lock comes after all of it:
// the unlock-lock order of q_lock puts every stamp before every read, and a happens-before
// detector sees nothing. Reordering the lock operations so that the transmitter dequeues a packet
// right after it was enqueued, before the sender's next lock, exposes the race. The other payload
// fields are written before the enqueue and do not race; the transmitter keeps the packets, and
// main prints the totals and frees them after the joins.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct packet {
  int seq;
  int len;
  long queued_at; // written by the sender AFTER the enqueue: the bug
  struct packet *next;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static struct packet *q_head, *q_tail; // under q_lock
static int closed;                     // under q_lock
static long ticks;                     // the sender's clock, its own

static void enqueue(struct packet *p) {
  pthread_mutex_lock(&q_lock);
  p->next = NULL;
  if (q_tail)
    q_tail->next = p;
  else
    q_head = p;
  q_tail = p;
  pthread_cond_signal(&nonempty);
  pthread_mutex_unlock(&q_lock);
}

static void *sender(void *arg) {
  (void)arg;
  for (int i = 0; i < 3; i++) {
    struct packet *p = malloc(sizeof *p);
    p->seq = i;
    p->len = 64 << i;
    enqueue(p);
    p->queued_at = ticks; // too late: the transmitter may own p already
    ticks += 10;
  }
  pthread_mutex_lock(&q_lock);
  closed = 1;
  pthread_cond_broadcast(&nonempty);
  pthread_mutex_unlock(&q_lock);
  return NULL;
}

struct tx_stats {
  int packets;
  long bytes;
  long latency;
  struct packet *sent[8]; // freed by main: no address is reused while the threads run
};

static void *transmitter(void *arg) {
  struct tx_stats *st = arg;
  usleep(30000); // link negotiation: starts after the sender in the natural run
  for (;;) {
    pthread_mutex_lock(&q_lock);
    while (!q_head && !closed)
      pthread_cond_wait(&nonempty, &q_lock);
    struct packet *p = q_head;
    if (p && !(q_head = p->next))
      q_tail = NULL;
    pthread_mutex_unlock(&q_lock);
    if (!p)
      break;
    long sent_at = 100 + 5L * st->packets;
    st->latency += sent_at - p->queued_at; // reads the stamp the sender may still be writing
    st->bytes += p->len;
    st->sent[st->packets++] = p;
  }
  return NULL;
}

int main(void) {
  static struct tx_stats st;
  pthread_t s, t;

  pthread_create(&s, NULL, sender, NULL);
  pthread_create(&t, NULL, transmitter, &st);
  pthread_join(s, NULL);
  pthread_join(t, NULL);

  printf("%d packets, %ld bytes, total queueing latency %ld ticks\n", st.packets, st.bytes,
         st.latency);
  for (int i = 0; i < st.packets; i++)
    free(st.sent[i]);
  return 0;
}
