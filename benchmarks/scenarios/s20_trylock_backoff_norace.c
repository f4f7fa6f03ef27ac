// SCENARIO: two tellers transfer money in opposite directions between two accounts, each locked
//           by its own mutex; the second lock is only tried and the first released on failure
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The classic deadlock-avoidance idiom for taking two locks in no fixed order: take the source
// account's lock, then *try* the destination's; if that fails, release the source's lock, yield
// and start over. Teller 0 moves money from account 0 to account 1 and teller 1 the other way,
// so they take the two locks in opposite orders, which with two blocking locks could deadlock
// (each holding one lock and waiting for the other). With the trylock nobody ever waits while
// holding a lock: the retry loop is correct, and every access to a balance happens while both
// account locks are held, so the balances are race-free. Each transfer holds both locks for a
// moment (the journal write), so the other teller's trylock does fail now and then and the
// back-off path really runs in a recorded run.
//
// A tool that treats a successful trylock like a blocking lock sees a lock-order cycle; a tool
// that ignores trylock sees unprotected balance updates. Neither is a real error here. The retry
// counts are each teller's own locals, published in its own element of `retries[]` and read by
// main after the joins, as are the final balances.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#define TRANSFERS 300

struct account {
  pthread_mutex_t lock;
  long balance;
};

static struct account accounts[2] = {
    {PTHREAD_MUTEX_INITIALIZER, 1000},
    {PTHREAD_MUTEX_INITIALIZER, 1000},
};
static long retries[2]; // one element per teller

// Returns with both locks held. Never blocks on `to` while holding `from`.
static long lock_pair(struct account *from, struct account *to) {
  long tries = 0;
  for (;;) {
    pthread_mutex_lock(&from->lock);
    if (pthread_mutex_trylock(&to->lock) == 0)
      return tries;
    pthread_mutex_unlock(&from->lock); // back off: give the other teller both locks
    tries++;
    sched_yield();
  }
}

static long transfer(struct account *from, struct account *to, long amount) {
  long tries = lock_pair(from, to);
  from->balance -= amount;
  to->balance += amount;
  usleep(20); // append to both accounts' journals while still holding both locks
  pthread_mutex_unlock(&to->lock);
  pthread_mutex_unlock(&from->lock);
  return tries;
}

static void *teller(void *arg) {
  int id = *(const int *)arg;
  struct account *from = &accounts[id], *to = &accounts[1 - id];
  long amount = id == 0 ? 3 : 2;
  long tries = 0;
  for (int i = 0; i < TRANSFERS; i++)
    tries += transfer(from, to, amount);
  retries[id] = tries;
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {0, 1};

  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, teller, &ids[i]);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  long total = accounts[0].balance + accounts[1].balance;
  printf("account 0: %ld, account 1: %ld, total %ld (%s)\n", accounts[0].balance,
         accounts[1].balance, total, total == 2000 ? "conserved" : "corrupted");
  // How often the back-off path ran depends on timing; only say whether it was needed.
  fprintf(stderr, "retries: %ld + %ld\n", retries[0], retries[1]);
  return 0;
}
