// SCENARIO: a race the recorded run shows, after which the process kills itself with SIGKILL
// CATEGORY: killed
// EXPECT: race 21 30
// ENDS: killed
// REORDER: no
//
// `evaluate.py check` requires a recorded run to end as the header's ENDS says: exit (the
// default, status 0), hang (stopped by `ilgen run --timeout`) or killed (by a signal). This one
// is killed, so it passes with `ENDS: killed` and fails with a note without it or with
// `ENDS: hang`; an unknown ENDS value is a header error (exit 2). `table1 --stability FILE`
// adds the "found in k/R single runs" columns from a `stability.py --json` file, here written by
// hand: 2 of its 3 plain runs found the race.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int x;

void *task(void *arg) {
  x = 1; // in the last segment of the worker, which never ends
  pause();
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, task, NULL);
  usleep(100000); // the worker writes first: timing only
  x = 2;
  kill(getpid(), SIGKILL);
  return 0;
}

// The scenario header above must stay the file's leading comment block, so the RUN lines are here.
// RUN: rm -rf %t && mkdir -p %t/exit %t/hang %t/bad
// RUN: python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %S --filter ends_killed_flagged --work %t/work -j 1 > %t/killed.out
// RUN: FileCheck --check-prefix=KILLED %s < %t/killed.out
// KILLED: PASS ends_killed_flagged expected: race 21 30 found: race 21 30 [diverged 0/{{[0-9]+}} (0%);
// KILLED: 1 scenario(s): 1 passed, 0 failed, 0 error(s);
//
// RUN: sed 's/^\/\/ ENDS: killed$/\/\/ (no ENDS line: exit)/' %s > %t/exit/ends_killed_flagged.c
// RUN: not python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %t/exit --work %t/work -j 1 > %t/exit.out
// RUN: FileCheck --check-prefix=EXIT %s < %t/exit.out
// EXIT: FAIL ends_killed_flagged expected: race 21 30 found: race 21 30 (recorded run killed by signal 9)
//
// RUN: sed 's/^\/\/ ENDS: killed$/\/\/ ENDS: hang/' %s > %t/hang/ends_killed_flagged.c
// RUN: not python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %t/hang --work %t/work -j 1 > %t/hang.out
// RUN: FileCheck --check-prefix=HANG %s < %t/hang.out
// HANG: FAIL ends_killed_flagged expected: race 21 30 found: race 21 30 (recorded run killed by signal 9; its header says ENDS: hang)
//
// RUN: sed 's/^\/\/ ENDS: killed$/\/\/ ENDS: crash/' %s > %t/bad/ends_killed_flagged.c
// RUN: sh -c 'python3 %S/../../benchmarks/evaluate.py check --ilgen %ilgen --scenarios-dir %t/bad --work %t/work -j 1; echo "exit=$?"' > %t/bad.out
// RUN: FileCheck --check-prefix=BAD %s < %t/bad.out
// BAD: ERROR {{.*}}ends_killed_flagged.c:4: 'ENDS:' must be one of exit, hang, killed, got 'crash'
// BAD: exit=2
//
// RUN: printf '%%s\n' '{"format": "ilgen-stability", "version": 1, "programs": [{"name": "ends_killed_flagged",' \
// RUN:   '"modes": {"plain": {"single": [[{"kind": "race", "lines": [21, 30]}], [], [{"kind": "race", "lines": [30, 21]}]]}}}]}' > %t/stab.json
// RUN: python3 %S/../../benchmarks/evaluate.py table1 --runs 1 --no-helgrind --stability %t/stab.json --ilgen %ilgen --scenarios-dir %S --filter ends_killed_flagged --work %t/work -j 1 > %t/table.out
// RUN: FileCheck --check-prefix=TABLE %s < %t/table.out
// TABLE: | scenario | category | reorder | real errors | ilgen found | ilgen false | ilgen diverged | found in k/R single runs (plain) | TSan 1 run found |
// TABLE: | ends_killed_flagged | killed | no | 1 | 1 | 0 | 0/{{[0-9]+}} (0%) | 2/3 |
// RUN: echo '{"format": "ilgen-stability", "version": 1, "programs": 3}' > %t/bad.json
// RUN: not python3 %S/../../benchmarks/evaluate.py table1 --runs 1 --stability %t/bad.json --ilgen %ilgen --scenarios-dir %S --filter ends_killed_flagged --work %t/work 2> %t/badjson.err
// RUN: FileCheck --check-prefix=BADJSON %s < %t/badjson.err
// BADJSON: evaluate: {{.*}}bad.json: "programs" is not a list
