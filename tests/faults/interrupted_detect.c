// Stopping `ilgen detect` (Ctrl-C, kill, hang-up) while it replays a program that hangs, and that
// forked a child of its own, leaves no process behind: ilgen kills every replay's process group.
// The replay had met the race before it hung, so ilgen then reports it and exits 66: what a replay
// proved is not lost to the signal (tests/confirm/stopped_keeps_confirmed_race.c has the rest).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: env HANG_IN_REPLAY=1 python3 %S/Inputs/interrupt.py SIGINT %t -- %ilgen detect %t.trace | FileCheck --check-prefix=INT %s
// RUN: env HANG_IN_REPLAY=1 python3 %S/Inputs/interrupt.py SIGTERM %t -- %ilgen detect %t.trace | FileCheck --check-prefix=TERM %s
// RUN: env HANG_IN_REPLAY=1 python3 %S/Inputs/interrupt.py SIGHUP %t -- %ilgen detect %t.trace | FileCheck --check-prefix=HUP %s
// INT:  SIGINT: replay seen True, ilgen status 66, 0 left
// TERM: SIGTERM: replay seen True, ilgen status 66, 0 left
// HUP:  SIGHUP: replay seen True, ilgen status 66, 0 left
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int counter;

static void *bump(void *arg) {
  counter++;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, bump, NULL);
  counter++;
  pthread_join(t, NULL);
  if (getenv("HANG_IN_REPLAY")) {
    fork();
    for (;;)
      sleep(1);
  }
  printf("counter %d\n", counter);
  return 0;
}
