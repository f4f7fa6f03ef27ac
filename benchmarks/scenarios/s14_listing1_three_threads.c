// SCENARIO: Listing 1 with three threads: two workers increment y without the lock, and the only
//           thing ordering them is main's critical section on m, which comes after worker A's
// CATEGORY: cs-order
// EXPECT: race 39 49
// REORDER: yes
//
// A variant of the paper's Listing 1 in which the racing pair belongs to two workers and the
// hiding edge goes through main. Worker A bumps y without any lock and then x under m. main waits
// "long enough" (a sleep, which orders nothing), takes m itself to bump x, and only then forks
// worker B, which bumps y without a lock and x under m. Whether A's y++ happens before B's y++
// depends on the order of A's critical section and main's: A unlock -> main lock -> fork B gives
// the chain A.y++ -> B.y++, and a happens-before detector sees nothing. When main takes m first,
// nothing orders A's y++ (before its own lock) with anything B does, and one increment can be
// lost (y = 2 instead of 3).
//
// In the natural run A starts at once and main sleeps before its critical section, so A's
// critical section comes first and the race is hidden. Exposing it needs the critical sections
// on m reordered (main's before A's). main's own y++ is before both forks; B's x++ is under m;
// the final report is after both joins.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int x = 0, y = 0;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

// A small amount of per-thread work, local only, so that the threads look like real workers.
static int checksum(int seed) {
  int h = seed;
  for (int i = 0; i < 64; i++)
    h = h * 31 + i;
  return h & 0xff;
}

// Worker A: y first (no lock), then x under m.
static void *task_a(void *arg) {
  int *local = arg;
  local[0] = checksum(1);
  y++; // RACE with worker B's y++: ordered only if A's critical section precedes main's
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  return NULL;
}

// Worker B: forked after main's critical section; y without a lock, then x under m.
static void *task_b(void *arg) {
  int *local = arg;
  y++; // RACE with worker A's y++
  local[0] = checksum(2);
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t ta, tb;
  int la = 0, lb = 0;

  y++; // before both forks: ordered with both workers
  if (pthread_create(&ta, NULL, task_a, &la) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  usleep(30000); // "A is surely done by now": a sleep is not synchronization
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  if (pthread_create(&tb, NULL, task_b, &lb) != 0) {
    fprintf(stderr, "pthread_create failed\n");
    return 1;
  }
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  // x is always 3; y is 3 unless the two workers' increments overlapped.
  printf("x = %d, y = %d (%s), work %d %d\n", x, y, (x == 3 && y == 3) ? "expected" : "lost update",
         la, lb);
  return 0;
}
