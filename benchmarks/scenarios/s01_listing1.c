// SCENARIO: the paper's Listing 1: main and task both update x under m and y without it; the
//           race on y is hidden when main's critical section comes first
// CATEGORY: cs-order
// EXPECT: race 34 44
// REORDER: yes
//
// Carril & Tichy's Listing 1, line for line, with the paper's line numbers in the comments: main
// increments y, forks task, increments y again, then x under m, and joins. task increments x
// under m and then y without any lock. The final value should be x = 2, y = 3, but main's second
// y++ (paper line 6) and task's y++ (paper line 17) are not ordered by anything except the order
// of the two critical sections on m: when main's unlock comes before task's lock, the unlock-lock
// edge orders them and a happens-before detector sees nothing; when task takes m first, both
// increments run concurrently and one of them can be lost (y = 2).
//
// In the natural run task starts slowly (a short sleep, not a synchronization operation), so
// main's critical section comes first and the race is hidden, as in the paper's example trace.
// From that one run the race must be predicted with the schedule the paper derives from its CSP
// model, fork.t1.t2, start.t2, lock.t2.m, unlock.t2.m, after which task's y++ and main's second
// y++ are unordered. main's first y++ (paper line 4) comes before the fork and races with
// nothing; the final printf comes after the join.
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int y = 0, x = 0;                       // paper line 1
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

// The paper's task (lines 13-18).
void *task(void *arg) {
  usleep(30000);                        // slow start: main's critical section comes first
  pthread_mutex_lock(&m);               // paper line 14
  x++;                                  // paper line 15
  pthread_mutex_unlock(&m);             // paper line 16
  y++;                                  // paper line 17: races with main's y++ (line 6)
  return arg;
}

// The paper's main (lines 3-11): its only sync operations are fork, lock, unlock and join, the
// events of the paper's CSP model (Figure 1); the report after the join is ordered with task.
int main(void) {
  pthread_t t1;
  y++;                                  // paper line 4: before the fork, ordered with task
  pthread_create(&t1, NULL, task, NULL); // paper line 5: t1 = fork(task)
  y++;                                  // paper line 6: races with task's y++ (line 17)
  pthread_mutex_lock(&m);               // paper line 7
  x++;                                  // paper line 8
  pthread_mutex_unlock(&m);             // paper line 9
  pthread_join(t1, NULL);               // paper line 10
  // x is always 2; y is 3 unless one of the racing increments was lost.
  printf("x = %d, y = %d (%s)\n", x, y, (x == 2 && y == 3) ? "expected" : "lost update");
  return 0;
}
