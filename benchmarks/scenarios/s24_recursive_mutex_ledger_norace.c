// SCENARIO: a ledger whose operations nest (transfer calls post calls journal_append), each taking
//           the same PTHREAD_MUTEX_RECURSIVE lock again; an auditor checks it under the lock
// CATEGORY: lookalike
// EXPECT: none
// REORDER: no
//
// The ledger's functions are all public and each takes ledger_lock itself, so that a caller
// never has to know whether the lock is already held: journal_append() locks, post() locks and
// calls journal_append(), transfer() locks and calls post() twice. A transfer therefore holds the
// lock three deep; the mutex is created PTHREAD_MUTEX_RECURSIVE, so the owner's relock only counts
// and the lock is released when the outermost unlock runs. Every access to the balances and to
// the journal happens with the lock held at least once, by two teller threads and an auditor
// thread that recomputes each balance from the journal and compares.
//
// A tool that does not understand recursive mutexes can get this wrong both ways: treating the
// inner unlock as the release (the rest of the outer critical section looks unprotected), or
// treating the relock as a self-deadlock. Neither happens. main reads the ledger after the joins.
#include <pthread.h>
#include <stdio.h>

#define ACCOUNTS 4
#define JOURNAL_CAP 128
#define TRANSFERS 12
#define AUDITS 5

struct entry {
  int account;
  long amount;
};

static pthread_mutex_t ledger_lock;
static long balances[ACCOUNTS];
static struct entry journal[JOURNAL_CAP];
static int journal_len;

// Callable with or without ledger_lock held.
static void journal_append(int account, long amount) {
  pthread_mutex_lock(&ledger_lock);
  if (journal_len < JOURNAL_CAP) {
    journal[journal_len].account = account;
    journal[journal_len].amount = amount;
    journal_len++;
  }
  pthread_mutex_unlock(&ledger_lock);
}

static void post(int account, long amount) {
  pthread_mutex_lock(&ledger_lock);
  balances[account] += amount;
  journal_append(account, amount); // second level
  pthread_mutex_unlock(&ledger_lock);
}

static void transfer(int from, int to, long amount) {
  pthread_mutex_lock(&ledger_lock);
  post(from, -amount); // the two postings are atomic together: nobody sees money in flight
  post(to, amount);
  pthread_mutex_unlock(&ledger_lock);
}

// Returns 1 if every balance equals the sum of its journal entries.
static int audit(void) {
  long sum[ACCOUNTS] = {0};
  int ok = 1;
  pthread_mutex_lock(&ledger_lock);
  for (int i = 0; i < journal_len; i++)
    sum[journal[i].account] += journal[i].amount;
  for (int a = 0; a < ACCOUNTS; a++)
    ok &= sum[a] == balances[a];
  pthread_mutex_unlock(&ledger_lock);
  return ok;
}

static void *teller(void *arg) {
  int id = *(const int *)arg;
  for (int i = 0; i < TRANSFERS; i++)
    transfer((id + i) % ACCOUNTS, (id + i + 1) % ACCOUNTS, 10 + i);
  return NULL;
}

static void *auditor(void *arg) {
  int *passed = arg;
  for (int i = 0; i < AUDITS; i++)
    *passed += audit();
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_t t[2], a;
  int ids[2] = {0, 2}, passed = 0;

  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&ledger_lock, &attr);
  pthread_mutexattr_destroy(&attr);
  for (int acc = 0; acc < ACCOUNTS; acc++)
    post(acc, 1000); // opening balances: two levels deep
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, teller, &ids[i]);
  pthread_create(&a, NULL, auditor, &passed);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  pthread_join(a, NULL);

  long total = 0;
  for (int acc = 0; acc < ACCOUNTS; acc++)
    total += balances[acc];
  printf("%d journal entries, total %ld, %d of %d audits passed, final audit %s\n", journal_len,
         total, passed, AUDITS, audit() ? "passed" : "failed");
  pthread_mutex_destroy(&ledger_lock);
  return 0;
}
