// A pipe as a lock, as libuv guards its signal handlers' tree: the pipe starts with one byte; a
// thread takes the lock by reading it and gives it back by writing it. Two threads each add to a
// shared counter 20 times inside that lock, and nothing else orders them. The prediction knows no
// order through a pipe, so it predicts the counter's pairs as candidates; their replays run the
// sections one at a time (the reads block as the kernel makes them) and the replay's detector
// orders each write of the byte before the read that takes it: no candidate is confirmed. Before,
// every replay confirmed a race on `counter` (libuv's signal_multiple_loops: 39 false findings).
// With -DSOCKETPAIR the lock is a socketpair, written at one end and read at the other.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 -DSOCKETPAIR %s -o %t.sp
// RUN: rm -rf %t.sptrace && env ILGEN_OPTIONS=trace_dir=%t.sptrace %t.sp
// RUN: sh -c '%ilgen detect %t.sptrace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

enum { SECTIONS = 20 };

int lock_fds[2];
long counter;

static void lock(void) {
  char c;
  if (read(lock_fds[0], &c, 1) != 1)
    _exit(2);
}

static void unlock(void) {
  char c = 42;
#ifdef SOCKETPAIR
  if (send(lock_fds[1], &c, 1, 0) != 1)
    _exit(2);
#else
  if (write(lock_fds[1], &c, 1) != 1)
    _exit(2);
#endif
}

void *worker(void *arg) {
  for (int i = 0; i < SECTIONS; i++) {
    lock();
    counter++;
    unlock();
  }
  return arg;
}

int main(void) {
#ifdef SOCKETPAIR
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, lock_fds) != 0)
    return 2;
#else
  if (pipe(lock_fds) != 0)
    return 2;
#endif
  unlock();
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  return counter != 2 * SECTIONS;
}

// CHECK:     ilgen: {{[1-9][0-9]*}} candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s)
// CHECK:     ilgen: 0 finding(s) confirmed
// CHECK:     exit=0
