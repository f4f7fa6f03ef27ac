// `ilgen run --timeout` records a program that would sleep forever: it returns within a few
// seconds with status 124, prints the trace directory, and the trace holds what the threads did
// before the time limit (the worker's write and its blocked join partner).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace
// RUN: python3 %S/../Inputs/within.py 8 124 -- %ilgen run --timeout 1 --out %t.trace -- %t 2> %t.err
// RUN: FileCheck %s --check-prefix=LIMIT < %t.err
// RUN: %ilgen dump %t.trace | FileCheck %s
//
// A program that ends by itself: its own status, the trace path printed.
// RUN: rm -rf %t.trace2 && not %ilgen run --out %t.trace2 -- %t exit 3 2> %t.err2
// RUN: FileCheck %s --check-prefix=EXIT < %t.err2
// RUN: %ilgen run --out %t.trace3 -- %t exit 0
// A program that is not there: the shell's 127.
// RUN: python3 %S/../Inputs/within.py 8 127 -- %ilgen run -- %t.missing
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int shared;

void *worker(void *arg) {
  shared = 1;
  for (;;)
    pause();
  return arg;
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "exit") == 0)
    return atoi(argv[2]);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  return 0;
}

// LIMIT: ilgen: trace: {{.*}}run_timeout.c.tmp.trace
// LIMIT: ilgen: stopped {{.*}} after the time limit
// EXIT: ilgen: trace: {{.*}}run_timeout.c.tmp.trace2
// CHECK: end=signal 15 (SIGTERM)
// CHECK: T0 join T1 PENDING at {{.*}}run_timeout.c:36
// CHECK: T1 write shared size=4 at {{.*}}run_timeout.c:25
