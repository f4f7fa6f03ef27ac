// Two threads pass a one-byte token through a pipe (libuv's signal lock: a read takes the lock, a
// write gives it back) around a shared counter, and nothing else orders them. The recording
// writes each write and each read that got bytes as a sync operation on the pipe's channel, and
// the model counts its bytes as a semaphore's units: a read waits for a write of its byte, so the
// two sections never overlap and nothing is predicted. (Before the reads and writes were
// recorded, detect predicted the counter's pair and its replay found no error.)
// With -DSOCKETPAIR the token goes through a socketpair, written with send at one end and read at
// the other; the two ends are one channel. With -DOUTSIDE the worker also reads the counter
// after giving the token back: that read races with main's write inside its section, and it is
// predicted and confirmed. With -DREUSED the pipe's ends get the numbers of two files that were
// written to and closed first: what the runtime learnt of those numbers (no stream) is forgotten
// at the close, and the pipe is a channel again.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=NORACE
// RUN: %ilgen cc -g -O0 -DSOCKETPAIR %s -o %t.sp
// RUN: rm -rf %t.sptrace && env ILGEN_OPTIONS=trace_dir=%t.sptrace %t.sp
// RUN: sh -c '%ilgen detect %t.sptrace; echo "exit=$?"' | FileCheck %s --check-prefix=NORACE
// RUN: %ilgen cc -g -O0 -DREUSED %s -o %t.re
// RUN: rm -rf %t.retrace && env ILGEN_OPTIONS=trace_dir=%t.retrace %t.re
// RUN: sh -c '%ilgen detect %t.retrace; echo "exit=$?"' | FileCheck %s --check-prefix=NORACE
// RUN: %ilgen cc -g -O0 -DOUTSIDE %s -o %t.out
// RUN: rm -rf %t.outtrace && env ILGEN_OPTIONS=trace_dir=%t.outtrace %t.out
// RUN: sh -c '%ilgen detect %t.outtrace; echo "exit=$?"' | FileCheck %s --check-prefix=RACE
// RUN: %ilgen cc -g -O0 -DOUTSIDE -DSOCKETPAIR %s -o %t.outsp
// RUN: rm -rf %t.outsptrace && env ILGEN_OPTIONS=trace_dir=%t.outsptrace %t.outsp
// RUN: sh -c '%ilgen detect %t.outsptrace; echo "exit=$?"' | FileCheck %s --check-prefix=RACE
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

int token[2];
long counter;
long seen;

static void take(void) {
  char c;
  if (read(token[0], &c, 1) != 1)
    _exit(2);
}

static void give(void) {
  char c = 1;
#ifdef SOCKETPAIR
  if (send(token[1], &c, 1, 0) != 1)
    _exit(2);
#else
  if (write(token[1], &c, 1) != 1)
    _exit(2);
#endif
}

void *worker(void *arg) {
  take();
  counter++;
  give();
#ifdef OUTSIDE
  seen = counter;
#endif
  return arg;
}

int main(void) {
#ifdef REUSED
  int f0 = open("/dev/null", O_WRONLY), f1 = open("/dev/null", O_WRONLY);
  if (write(f0, "x", 1) != 1 || write(f1, "x", 1) != 1)
    return 2;
  close(f0);
  close(f1);
#endif
#ifdef SOCKETPAIR
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, token) != 0)
    return 2;
#else
  if (pipe(token) != 0)
    return 2;
#endif
  give();
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  take();
  counter++;
  give();
  pthread_join(t, NULL);
  return 0;
}

// NORACE:      ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s)
// NORACE-NEXT: ilgen: 0 finding(s) confirmed
// NORACE-NEXT: exit=0

// RACE:        WARNING: ilgen: data race
// RACE-DAG:    #0 worker {{.*}}pipe_token_norace.c:60
// RACE-DAG:    #0 main {{.*}}pipe_token_norace.c:84
// RACE:        ilgen: 1 finding(s) confirmed
// RACE:        exit=66
