// Atomicity benchmark: a bank. THREADS tellers (argv[1]) each serve ITERS customers (argv[2]).
// Every customer is one marked transaction (ILGEN_ATOMIC) on an account the teller picks:
//   - deposit: one critical section (serializable);
//   - transfer: both accounts' locks taken in address order, nested (serializable);
//   - withdraw: the check and the update in two critical sections of the account's lock (the
//     lost update `ilgen detect --atomicity` must predict: read-write-write on the balance).
// The trace grows linearly with THREADS * ITERS; the distinct sites and locksets do not.
#include <ilgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "workers.h"

#define ACCOUNTS 8

struct account {
  pthread_mutex_t lock;
  long balance;
};

static struct account accounts[ACCOUNTS];

ILGEN_ATOMIC static void deposit(struct account *a, long amount) {
  pthread_mutex_lock(&a->lock);
  a->balance += amount;
  pthread_mutex_unlock(&a->lock);
}

ILGEN_ATOMIC static void transfer(struct account *from, struct account *to, long amount) {
  struct account *first = from < to ? from : to;
  struct account *second = from < to ? to : from;
  pthread_mutex_lock(&first->lock);
  pthread_mutex_lock(&second->lock);
  if (from->balance >= amount) {
    from->balance -= amount;
    to->balance += amount;
  }
  pthread_mutex_unlock(&second->lock);
  pthread_mutex_unlock(&first->lock);
}

ILGEN_ATOMIC static int withdraw(struct account *a, long amount) {
  pthread_mutex_lock(&a->lock);
  long seen = a->balance; // the check
  pthread_mutex_unlock(&a->lock);
  if (seen < amount)
    return 0;
  pthread_mutex_lock(&a->lock);
  a->balance = seen - amount; // the update, from a stale check
  pthread_mutex_unlock(&a->lock);
  return 1;
}

static void *teller(void *arg) {
  long id = (long)arg;
  unsigned seed = (unsigned)id * 2654435761u + 1;
  for (long i = 0; i < iters; i++) {
    seed = seed * 1103515245u + 12345u;
    struct account *a = &accounts[(seed >> 8) % ACCOUNTS];
    struct account *b = &accounts[(seed >> 16) % ACCOUNTS];
    switch ((seed >> 24) % 4) {
    case 0:
      deposit(a, 10);
      break;
    case 1:
      withdraw(a, 5);
      break;
    default:
      if (a != b)
        transfer(a, b, 3);
      break;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = workers(argc, argv);
  if (!threads)
    return 2;
  for (int i = 0; i < ACCOUNTS; i++) {
    pthread_mutex_init(&accounts[i].lock, NULL);
    accounts[i].balance = 1000;
  }
  run(threads, teller);
  long total = 0;
  for (int i = 0; i < ACCOUNTS; i++)
    total += accounts[i].balance;
  printf("%ld\n", total);
  return 0;
}
