// A detached logging thread and a forgotten (never joined, never detached) thread each touch
// only their own data, and are still running when main returns. The exit grace records what they
// do, and nothing races: no candidate, exit 0. `--show-all` names the forgotten thread's missing
// join; the detached one was never meant to be joined.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

char log_line[64];
long spins;

void *logger(void *arg) {
  for (int i = 0; i < 3; i++) {
    snprintf(log_line, sizeof log_line, "tick %d", i);
    usleep(10 * 1000);
  }
  return arg;
}

void *forgotten(void *arg) {
  for (int i = 0; i < 1000; i++)
    spins++;
  return arg;
}

int main(void) {
  pthread_t l, f;
  pthread_create(&l, NULL, logger, NULL);
  pthread_detach(l);
  pthread_create(&f, NULL, forgotten, NULL);
  return 0;
}

// RECORDED:     T1 write log_line
// RECORDED:     T1 end
// RECORDED:     T2 write spins
// RECORDED:     T2 end

// CHECK:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 0 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: thread T2 was never joined (created at {{.*}}exit_detached_logger_norace.c:35)
// CHECK-NEXT: exit=0
