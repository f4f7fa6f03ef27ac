// A program that keeps state on disk between runs, as a database does: at start-up it reads the
// file `state` in its working directory and, when an earlier run left it, takes another lock
// (`again`, not `fresh`) and joins its worker before it writes `counter`; then it writes the file.
// The recorded run starts without the file and leaves it behind, so every replay finds it and
// leaves the schedule at main's first lock: infeasible. `--before-replay 'rm -f state'` (run in the recorded
// directory, here not the one detect runs in) removes it before each replay, which then follows
// the schedule to the race on `counter` (exact lines, exit 66). A command that fails fails its
// replay, naming the command and its status, and the program is not run (no stdout.txt).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace %t.d && mkdir %t.d
// RUN: sh -c 'cd %t.d && env ILGEN_OPTIONS=trace_dir=%t.trace %t'
// RUN: sh -c '%ilgen detect -q --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT0
// RUN: python3 -c 'import json, sys; r = json.load(sys.stdin); print(*("%%s=%%d" %% (k, r["counts"][k]) for k in ("confirmed_races", "infeasible", "failed")))' < %t.json | FileCheck %s --check-prefix=LEFT
// RUN: sh -c '%ilgen detect -q --replay-jobs 1 --before-replay "rm -f state" --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 -c 'import json, sys; r = json.load(sys.stdin); print(*("%%s=%%d" %% (k, r["counts"][k]) for k in ("confirmed_races", "infeasible", "failed"))); [print(f["object"]["name"], *sorted(f[s]["location"]["line"] for s in ("current", "previous"))) for f in r["findings"]]' < %t.json | FileCheck %s
// RUN: sh -c '%ilgen detect -q --show-all --fallbacks 0 --before-replay "exit 3" %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=FAILS
// RUN: test ! -e %t.trace/replay-1/stdout.txt
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t again = PTHREAD_MUTEX_INITIALIZER;
int counter;

void *worker(void *arg) {
  counter = 1;
  return arg;
}

int main(void) {
  FILE *f = fopen("state", "r");
  int seen = f != NULL;
  if (f)
    fclose(f);
  if (seen)
    pthread_mutex_lock(&again), pthread_mutex_unlock(&again);
  else
    pthread_mutex_lock(&fresh), pthread_mutex_unlock(&fresh);
  f = fopen("state", "w");
  if (f) {
    fputs("ran\n", f);
    fclose(f);
  }
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  // A later run lets the worker finish first: off the schedule, it has no race.
  if (seen)
    pthread_join(t, NULL);
  counter = 2;
  if (!seen)
    pthread_join(t, NULL);
  return 0;
}

// EXIT0: exit=0
// LEFT: confirmed_races=0 infeasible=1 failed=0

// EXIT66: exit=66
// CHECK:      confirmed_races=1 infeasible=0 failed=0
// CHECK-NEXT: counter 27 50
// CHECK-NOT:  {{.}}

// FAILS: the --before-replay command `exit 3` exited with status 3, so the program was not replayed; see {{.*}}replay-1/before-replay.txt
// FAILS: exit=0

// `ilgen replay` takes the same flag: the state file is there again (the detect runs above left
// it), and the replay of the candidate with the reset confirms the race.
// RUN: test -e %t.d/state
// RUN: sh -c '%ilgen replay --before-replay "rm -f state" %t.trace:1 2>&1; echo "exit=$?"' | FileCheck %s --check-prefix=REPLAY
// REPLAY:     SUMMARY: ilgen: data race {{.*}}before_replay_state_file.c:{{27|50}}
// REPLAY:     exit=66

