// SCENARIO: with a recursive account lock, helpers take it liberally and one "caller holds the
//           lock" helper ends up called without it: the pending fee races with the month-end run
// CATEGORY: recursive-mutex
// EXPECT: race 44 72
// REORDER: yes
//
// acct_lock is PTHREAD_MUTEX_RECURSIVE, so every account function simply takes it, nested or not:
// transaction() locks and calls charge_card_fee() and withdraw(), which locks again; month_end()
// locks and calls deposit(), which locks again. charge_card_fee() is the exception: it is
// documented "caller holds acct_lock" and does not lock, which is fine from transaction(). The
// new contactless path, tap_to_pay(), calls charge_card_fee() and then withdraw() directly: the
// fee is added to pending_fee before withdraw() takes the lock, while the month-end thread reads
// pending_fee for the statement under the lock.
//
// In the natural run the month-end thread starts later (a sleep), so the teller's payment is
// complete by then: the teller's unlock in withdraw() and month_end's lock order the fee update
// before the statement and a happens-before detector sees nothing. If month_end's critical
// section runs first, the teller's unprotected update of pending_fee and the statement's read
// are unordered (the statement may show the fee or not). Every other access (balance, the
// nested deposit) is under the lock; main's own transaction() runs before the threads exist and
// the final check after the joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define CARD_FEE 2
#define INTEREST 7

struct account {
  long balance;
  long pending_fee; // card fees charged since the last statement
};

struct statement {
  long balance;
  long fees;
};

static struct account card_acct = {500, 0};
static pthread_mutex_t acct_lock;

// Caller holds acct_lock.
static void charge_card_fee(void) {
  card_acct.pending_fee += CARD_FEE;
}

static void withdraw(long amount) {
  pthread_mutex_lock(&acct_lock);
  card_acct.balance -= amount;
  pthread_mutex_unlock(&acct_lock);
}

static void deposit(long amount) {
  pthread_mutex_lock(&acct_lock);
  card_acct.balance += amount;
  pthread_mutex_unlock(&acct_lock);
}

// The original card path: the fee and the withdrawal in one critical section (two levels deep).
static void transaction(long amount) {
  pthread_mutex_lock(&acct_lock);
  charge_card_fee();
  withdraw(amount);
  pthread_mutex_unlock(&acct_lock);
}

// The month-end run: interest (nested lock), then the statement, all under the lock.
static void month_end(struct statement *st) {
  pthread_mutex_lock(&acct_lock);
  deposit(INTEREST);
  st->balance = card_acct.balance;
  st->fees = card_acct.pending_fee;
  pthread_mutex_unlock(&acct_lock);
}

// The new contactless path: the helper's precondition is not met, the fee goes in unlocked.
static void tap_to_pay(long amount) {
  charge_card_fee();
  withdraw(amount);
}

static void *teller(void *arg) {
  (void)arg;
  tap_to_pay(40);
  return NULL;
}

static void *month_end_job(void *arg) {
  usleep(30000); // scheduled for the end of the day: the teller is done by then
  month_end(arg);
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_t t, m;
  struct statement st = {0, 0};

  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&acct_lock, &attr);
  pthread_mutexattr_destroy(&attr);
  transaction(25); // before the threads: the correct, locked card path
  pthread_create(&t, NULL, teller, NULL);
  pthread_create(&m, NULL, month_end_job, &st);
  pthread_join(t, NULL);
  pthread_join(m, NULL);
  printf("balance %ld, fees %ld; statement: balance %ld, fees %ld (%s)\n", card_acct.balance,
         card_acct.pending_fee, st.balance, st.fees,
         st.fees == card_acct.pending_fee ? "complete" : "fee missing from the statement");
  pthread_mutex_destroy(&acct_lock);
  return 0;
}
