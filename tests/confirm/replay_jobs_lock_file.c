// A program that runs one instance at a time, as a server on a fixed port does: it takes an
// exclusive lock (flock) on the file its argument names, held until it exits, and ends with status
// 75 when another instance holds it. Its replays rerun the recorded command line, so they all
// want the same file: replays that run at the same time (one per core by default) make each other
// infeasible. `--replay-jobs 1` runs them one after another, and every candidate is confirmed:
// three races (a, b and c, each written by main and by one thread), exact lines, exit 66, no
// replay infeasible or failed. flock, unlike a file made with O_EXCL, is released however a
// replay ends, so no replay leaves the next one locked out. (Without the flag the replays overlap
// and collide, while main holds the lock for 200 ms; that depends on timing and is not checked.)
// `--replay-jobs 0` is a usage error, as `--replay-timeout 0` is: one message, exit 2.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t %t.lock
// RUN: sh -c '%ilgen detect -q --replay-jobs 1 --format json %t.trace > %t.json; echo "exit=$?"' | FileCheck %s --check-prefix=EXIT66
// RUN: python3 -c 'import json, sys; r = json.load(sys.stdin); print(*("%%s=%%d" %% (k, r["counts"][k]) for k in ("candidates", "confirmed_races", "no_error", "infeasible", "failed"))); [print(f["object"]["name"], *sorted(f[s]["location"]["line"] for s in ("current", "previous"))) for f in r["findings"]]' < %t.json | FileCheck %s
// RUN: sh -c '%ilgen detect --replay-jobs 0 %t.trace; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: sh -c '%ilgen detect --replay-timeout 0 %t.trace; echo "exit=$?"' 2>&1 | FileCheck %s --check-prefix=ZERO-TIMEOUT
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>

int a, b, c;

void *set_a(void *arg) {
  a = 1;
  return arg;
}

void *set_b(void *arg) {
  b = 1;
  return arg;
}

void *set_c(void *arg) {
  c = 1;
  return arg;
}

int main(int argc, char **argv) {
  int fd = argc > 1 ? open(argv[1], O_CREAT | O_RDWR, 0600) : -1;
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
    fprintf(stderr, "%s: another instance holds it\n", argc > 1 ? argv[1] : "no lock file");
    return 75;
  }
  usleep(200 * 1000);
  pthread_t t[3];
  pthread_create(&t[0], NULL, set_a, NULL);
  pthread_create(&t[1], NULL, set_b, NULL);
  pthread_create(&t[2], NULL, set_c, NULL);
  a = 2;
  b = 2;
  c = 2;
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
  return 0;
}

// EXIT66: exit=66

// CHECK:      candidates=3 confirmed_races=3 no_error=0 infeasible=0 failed=0
// CHECK-DAG:  a 27 52
// CHECK-DAG:  b 32 53
// CHECK-DAG:  c 37 54
// CHECK-NOT:  {{.}}

// ZERO:      ilgen: error: --replay-jobs must be at least 1
// ZERO-NEXT: exit=2
// ZERO-TIMEOUT:      ilgen: error: --replay-timeout must be at least 1
// ZERO-TIMEOUT-NEXT: exit=2
