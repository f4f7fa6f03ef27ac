// Two tellers move money between two accounts in opposite directions, each taking its source
// account's lock and then only trying the destination's (a trylock, or a timed lock with a short
// limit), backing off when that fails. The locks are taken in both orders, but no thread ever
// waits for good while holding one, so there is no deadlock: a try that meets the lock held
// fails (a timed lock times out) and the thread goes another way. The lock graph must not count
// a successful try as a request, and a state with a thread stopped at one is no deadlock: 0
// candidates in each of 10 recordings of each variant. (Before, every recording gave one
// deadlock candidate whose replays were refuted.)
//
// RUN: %ilgen cc -g -O1 %s -o %t
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t try >/dev/null && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: bash -c 'for i in $(seq 10); do rm -rf %t.r && env ILGEN_OPTIONS=trace_dir=%t.r %t timed >/dev/null && %ilgen detect --no-replay %t.r | head -1; done' \
// RUN:   | sort | uniq -c | FileCheck %s
// RUN: %t try | FileCheck --check-prefix=SUM %s
// CHECK: 10 ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// SUM: total 2000
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TRANSFERS = 40 };

struct account {
  pthread_mutex_t lock;
  long balance;
};

static struct account accounts[2] = {
    {PTHREAD_MUTEX_INITIALIZER, 1000},
    {PTHREAD_MUTEX_INITIALIZER, 1000},
};
static int timed;

static int try_second(pthread_mutex_t *m) {
  if (!timed)
    return pthread_mutex_trylock(m);
  struct timespec limit;
  clock_gettime(CLOCK_REALTIME, &limit);
  limit.tv_nsec += 200 * 1000;
  if (limit.tv_nsec >= 1000000000) {
    limit.tv_sec++;
    limit.tv_nsec -= 1000000000;
  }
  return pthread_mutex_timedlock(m, &limit);
}

static void *teller(void *arg) {
  long me = (long)arg;
  struct account *from = &accounts[me], *to = &accounts[1 - me];
  for (int i = 0; i < TRANSFERS; i++) {
    for (;;) {
      pthread_mutex_lock(&from->lock);
      if (try_second(&to->lock) == 0)
        break;
      pthread_mutex_unlock(&from->lock);
      sched_yield();
    }
    from->balance -= 5;
    to->balance += 5;
    usleep(50); // both locks held a moment: the other teller's try meets them now and then
    pthread_mutex_unlock(&to->lock);
    pthread_mutex_unlock(&from->lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  timed = argc > 1 && strcmp(argv[1], "timed") == 0;
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, teller, (void *)i);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  printf("total %ld\n", accounts[0].balance + accounts[1].balance);
  return 0;
}
