// SCENARIO: two tellers move money between the same two accounts in opposite directions;
//           transfer() locks the source account, then the destination: a lock-order inversion
// CATEGORY: deadlock
// EXPECT: deadlock 41 76
// REORDER: yes
//
// The classic bank-transfer deadlock. transfer(from, to) takes from->lock and then to->lock, so
// the order in which the two account locks are taken depends on the direction of the transfer.
// Teller A moves money from account 1 to account 2 (locks 1 then 2), teller B from account 2 to
// account 1 (locks 2 then 1). If A holds account 1's lock and B holds account 2's lock at the same
// time, each waits forever for the other's lock in the second pthread_mutex_lock of transfer()
// (both threads stuck on the same line), and main waits forever in its first pthread_join.
//
// In the natural run teller B starts late (it "authenticates" first, a sleep, which is no
// synchronization operation), so all of A's transfers are over before B's first one and the run
// finishes. The deadlock needs only a reordering of the recorded lock operations: A takes account
// 1's lock, B takes account 2's lock, then both request the other one.
//
// Data: balances and transfer counts are only touched with both account locks held, and each
// teller's result is read by main after the joins: there is no data race.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct account {
  pthread_mutex_t lock;
  int id;
  long balance;
  int transfers;
};

static struct account accounts[2] = {
    {PTHREAD_MUTEX_INITIALIZER, 1, 1000, 0},
    {PTHREAD_MUTEX_INITIALIZER, 2, 500, 0},
};

// Moves `amount` if the source has it. Lock order: source, then destination (the bug).
static int transfer(struct account *from, struct account *to, long amount) {
  int ok = 0;
  pthread_mutex_lock(&from->lock);
  pthread_mutex_lock(&to->lock); // the inverted pair of tellers blocks here
  if (from->balance >= amount) {
    from->balance -= amount;
    to->balance += amount;
    from->transfers++;
    to->transfers++;
    ok = 1;
  }
  pthread_mutex_unlock(&to->lock);
  pthread_mutex_unlock(&from->lock);
  return ok;
}

struct teller {
  struct account *from, *to;
  long amount;
  int start_delay_us;
  int done;
};

static void *teller(void *arg) {
  struct teller *t = arg;
  usleep(t->start_delay_us); // authentication: B's transfers come after A's in the natural run
  for (int i = 0; i < 3; i++)
    t->done += transfer(t->from, t->to, t->amount);
  return NULL;
}

int main(void) {
  struct teller a = {&accounts[0], &accounts[1], 100, 0, 0};
  struct teller b = {&accounts[1], &accounts[0], 40, 40000, 0};
  pthread_t ta, tb;

  pthread_create(&ta, NULL, teller, &a);
  pthread_create(&tb, NULL, teller, &b);
  pthread_join(ta, NULL); // main is stuck here when the tellers deadlock
  pthread_join(tb, NULL);

  long total = accounts[0].balance + accounts[1].balance;
  printf("A: %d transfers, B: %d transfers; balances %ld + %ld = %ld (%s)\n", a.done, b.done,
         accounts[0].balance, accounts[1].balance, total, total == 1500 ? "conserved" : "BROKEN");
  return 0;
}
