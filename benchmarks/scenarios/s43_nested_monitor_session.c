// SCENARIO: nested monitor lockout: session_recv() holds the session lock across the channel's
//           blocking receive, and the sender needs the session lock between two messages
// CATEGORY: deadlock
// EXPECT: deadlock 62 72 109
// REORDER: yes
//
// A session object wraps a one-slot message channel. The channel is a monitor of its own
// (chan.lock, chan.nonempty and a predicate loop around pthread_cond_wait). The session adds
// per-session accounting under session.lock: session_send() puts the message into the channel
// and then counts it under session.lock; session_recv() takes session.lock and, still holding it,
// receives from the channel. The channel's wait releases only chan.lock, so a receiver blocked in
// the channel keeps session.lock: if it waits for message 2 while the sender still has to account
// for message 1, the sender waits in pthread_mutex_lock for session.lock and the receiver waits
// in pthread_cond_wait for a message the sender will never put. main is stuck joining the sender.
//
// In the natural run the receiver starts 30 ms late: the sender has put and accounted message 1
// by then; the receiver takes it without waiting and then waits for message 2 (holding
// session.lock), which the sender puts 30 ms later without needing the session lock; the sender
// then waits only until the receiver returns. Reordering the recorded operations, the receiver
// takes message 1 and waits for message 2 before the sender's accounting of message 1, exposes
// the lockout. The wait loop is correct: no signal is ever lost.
//
// Data: the slot is guarded by chan.lock, the counters by session.lock; main prints after the
// joins. There is no data race.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct channel {
  pthread_mutex_t lock;
  pthread_cond_t nonempty, nonfull;
  int full; // under lock
  int msg;  // under lock
};

struct session {
  pthread_mutex_t lock;
  int sent;     // under lock
  int received; // under lock
  long bytes;   // under lock
  struct channel chan;
};

static struct session sess = {
    PTHREAD_MUTEX_INITIALIZER, 0, 0, 0,
    {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0},
};

static void chan_put(struct channel *c, int msg) {
  pthread_mutex_lock(&c->lock);
  while (c->full)
    pthread_cond_wait(&c->nonfull, &c->lock);
  c->msg = msg;
  c->full = 1;
  pthread_cond_signal(&c->nonempty);
  pthread_mutex_unlock(&c->lock);
}

static int chan_get(struct channel *c) {
  pthread_mutex_lock(&c->lock);
  while (!c->full)
    pthread_cond_wait(&c->nonempty, &c->lock); // the receiver blocks here, holding sess.lock
  int msg = c->msg;
  c->full = 0;
  pthread_cond_signal(&c->nonfull);
  pthread_mutex_unlock(&c->lock);
  return msg;
}

static void session_send(struct session *s, int msg) {
  chan_put(&s->chan, msg);
  pthread_mutex_lock(&s->lock); // the sender blocks here: the receiver holds sess.lock
  s->sent++;
  s->bytes += sizeof msg;
  pthread_mutex_unlock(&s->lock);
}

// The bug: the session lock is held across the blocking channel receive.
static int session_recv(struct session *s) {
  pthread_mutex_lock(&s->lock);
  int msg = chan_get(&s->chan);
  s->received++;
  pthread_mutex_unlock(&s->lock);
  return msg;
}

static void *sender(void *arg) {
  (void)arg;
  session_send(&sess, 101);
  usleep(60000); // message 2 is produced later
  session_send(&sess, 102);
  return NULL;
}

static void *receiver(void *arg) {
  int *sum = arg;
  usleep(30000); // the receiver comes up after message 1 was sent, in the natural run
  for (int i = 0; i < 2; i++)
    *sum += session_recv(&sess);
  return NULL;
}

int main(void) {
  pthread_t snd, rcv;
  static int sum;

  pthread_create(&snd, NULL, sender, NULL);
  pthread_create(&rcv, NULL, receiver, &sum);
  pthread_join(snd, NULL); // main blocks here when the session locks up
  pthread_join(rcv, NULL);

  printf("sent %d, received %d, %ld bytes, sum of messages %d\n", sess.sent, sess.received,
         sess.bytes, sum);
  return 0;
}
