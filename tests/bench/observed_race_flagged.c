// SCENARIO: Listing 1 steered the wrong way: main sleeps before its y++, so task's critical
//           section and y++ come first and the recorded run shows the race it claims to hide
// CATEGORY: cs-order
// EXPECT: race 22 30
// REORDER: yes
//
// A scenario whose `usleep` no longer hides its race (here on purpose, on a loaded machine by
// accident) still has its race confirmed, but it tests observation, not prediction: the recorded
// run has task's y++ and main's y++ unordered. `evaluate.py check` must fail it from the dump of
// that run, and pass it once the header says the run shows the race (REORDER: no).
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int y = 0, x = 0;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *task(void *arg) {
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  y++; // task's y++, before main's critical section in the recorded run
  return arg;
}

int main(void) {
  pthread_t t1;
  pthread_create(&t1, NULL, task, NULL);
  usleep(100000); // task runs first: timing only
  y++;
  pthread_mutex_lock(&m);
  x++;
  pthread_mutex_unlock(&m);
  pthread_join(t1, NULL);
  printf("x = %d, y = %d\n", x, y);
  return 0;
}

// The scenario header above must stay the file's leading comment block, so the RUN lines are here.
// RUN: rm -rf %t && mkdir -p %t/scen
// RUN: not python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %S --filter observed_race_flagged --work %t/work -j 1 > %t/yes.out
// RUN: FileCheck --check-prefix=YES %s < %t/yes.out
// YES: FAIL observed_race_flagged expected: race 22 30 found: race 22 30 (recorded run observed the race 22/30: the scenario no longer tests prediction; lengthen its usleep or mark it observed (REORDER: no))
// YES: 1 scenario(s): 0 passed, 1 failed, 0 error(s); {{.*}} the recorded runs hid 0 and showed 1;
// RUN: sed 's/^\/\/ REORDER: yes$/\/\/ REORDER: no/' %s > %t/scen/observed_race_flagged.c
// RUN: python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %t/scen --work %t/work -j 1 > %t/no.out
// RUN: FileCheck --check-prefix=NO %s < %t/no.out
// NO: PASS observed_race_flagged expected: race 22 30 found: race 22 30 [
// NO: 1 scenario(s): 1 passed, 0 failed, 0 error(s); {{.*}} the recorded runs hid 0 and showed 1;
