// A detect stopped by SIGTERM (a batch scheduler's time limit, a user's Ctrl-C) while it replays
// still prints what the replays before proved. Two races, on a and on b, one candidate each,
// replayed one at a time. The program stops ilgen itself, so that nothing depends on timing: in
// the replay of the schedule its argument names, main sends SIGTERM to its parent (ilgen) and
// waits. Stopped at the second replay: the first one's race is reported, the second candidate is
// "cut short", stderr says so, exit 66 (that replay also met the race on b). Stopped at the first: nothing was proved, so the exit is
// the shell's 143 (never 0: the run was not clean) and both candidates are failed, none lost
// silently.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t 2
// RUN: sh -c '%ilgen detect --show-all --replay-jobs 1 --fallbacks 0 %t.trace 2>%t.err; echo "exit=$?"' | FileCheck %s --check-prefix=SECOND
// RUN: FileCheck %s --check-prefix=SECOND-ERR < %t.err
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t 1
// RUN: sh -c '%ilgen detect -q --show-all --replay-jobs 1 --fallbacks 0 %t.trace 2>%t.err; echo "exit=$?"' | FileCheck %s --check-prefix=FIRST
// RUN: FileCheck %s --check-prefix=FIRST-ERR < %t.err
//
// SECOND-DAG: SUMMARY: ilgen: data race {{.*}}stopped_keeps_confirmed_race.c:{{41 in bump_a|61 in main}}
// SECOND-DAG: SUMMARY: ilgen: data race {{.*}}stopped_keeps_confirmed_race.c:{{46 in bump_b|62 in main}}
// SECOND: ilgen: 2 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 1 failed
// SECOND: candidate 2: race at {{.*}}: replay failed: cut short: ilgen was stopped by signal 15
// SECOND: exit=66
// SECOND-ERR: ilgen: stopped by SIGTERM: 1 replay(s) cut short or not run; the report has what the others proved
//
// FIRST-NOT: WARNING: ilgen
// FIRST: ilgen: 2 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 2 failed
// FIRST: candidate 1: race at {{.*}}: replay failed: cut short: ilgen was stopped by signal 15
// FIRST: candidate 2: race at {{.*}}: replay failed: not replayed: ilgen was stopped by signal 15
// FIRST: exit=143
// FIRST-ERR: ilgen: stopped by SIGTERM: 2 replay(s) cut short or not run
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int a, b;

void *bump_a(void *arg) {
  a++;
  return arg;
}

void *bump_b(void *arg) {
  b++;
  return arg;
}

int main(int argc, char **argv) {
  const char *options = getenv("ILGEN_OPTIONS");
  char schedule[32];
  snprintf(schedule, sizeof schedule, "schedule-%s.json", argc > 1 ? argv[1] : "0");
  if (options && strstr(options, schedule)) {
    kill(getppid(), SIGTERM);
    pause();
  }
  pthread_t t1, t2;
  pthread_create(&t1, NULL, bump_a, NULL);
  pthread_create(&t2, NULL, bump_b, NULL);
  a++;
  b++;
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  return 0;
}
