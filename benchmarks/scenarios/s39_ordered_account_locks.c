// SCENARIO: three tellers transfer money around a ring of accounts (1->2, 2->3, 3->1); transfer()
//           always locks the lower account id first: a global lock order, no deadlock, no race
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The fixed version of the bank-transfer deadlock. Locking "source, then destination" would make
// the ring of transfers 1->2, 2->3, 3->1 a three-thread lock cycle; here transfer() sorts the two
// accounts by id and always locks the lower id first, so every thread acquires account locks in
// one global order (1 < 2 < 3). A cycle of waiting threads would need some thread to hold a
// higher-numbered lock while requesting a lower-numbered one, which never happens: no reordering
// of the recorded operations deadlocks. The direction of the money flow (from/to) is independent
// of the locking order.
//
// Balances and counts are touched only with both account locks held; each teller's tally is its
// own and main reads everything after the joins. The tellers start 5 ms apart in the natural run.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ACCOUNTS 3

struct account {
  pthread_mutex_t lock;
  int id;
  long balance;
  int ops;
};

static struct account accounts[ACCOUNTS] = {
    {PTHREAD_MUTEX_INITIALIZER, 1, 300, 0},
    {PTHREAD_MUTEX_INITIALIZER, 2, 300, 0},
    {PTHREAD_MUTEX_INITIALIZER, 3, 300, 0},
};

// Both locks in id order, whatever the direction of the transfer.
static int transfer(struct account *from, struct account *to, long amount) {
  struct account *first = from->id < to->id ? from : to;
  struct account *second = from->id < to->id ? to : from;
  int ok = 0;
  pthread_mutex_lock(&first->lock);
  pthread_mutex_lock(&second->lock);
  if (from->balance >= amount) {
    from->balance -= amount;
    to->balance += amount;
    ok = 1;
  }
  from->ops++;
  to->ops++;
  pthread_mutex_unlock(&second->lock);
  pthread_mutex_unlock(&first->lock);
  return ok;
}

struct teller {
  int from, to; // indices into accounts
  long amount;
  int done;
};

static struct teller tellers[ACCOUNTS] = {
    {0, 1, 50, 0}, // 1 -> 2
    {1, 2, 70, 0}, // 2 -> 3
    {2, 0, 90, 0}, // 3 -> 1: the transfer that would close the cycle
};

static void *teller(void *arg) {
  struct teller *t = arg;
  usleep(5000 * (unsigned)(t - tellers)); // staggered start
  for (int i = 0; i < 2; i++)
    t->done += transfer(&accounts[t->from], &accounts[t->to], t->amount);
  return NULL;
}

int main(void) {
  pthread_t th[ACCOUNTS];
  for (int i = 0; i < ACCOUNTS; i++)
    pthread_create(&th[i], NULL, teller, &tellers[i]);
  for (int i = 0; i < ACCOUNTS; i++)
    pthread_join(th[i], NULL);

  long total = 0;
  for (int i = 0; i < ACCOUNTS; i++) {
    printf("account %d: balance %ld after %d operations\n", accounts[i].id, accounts[i].balance,
           accounts[i].ops);
    total += accounts[i].balance;
  }
  printf("tellers done: %d %d %d; total %ld (%s)\n", tellers[0].done, tellers[1].done,
         tellers[2].done, total, total == 900 ? "conserved" : "BROKEN");
  return 0;
}
