// A pipe as a lock, as libuv guards its signal handlers' tree: the pipe starts with one byte; a
// thread takes the lock by reading it and gives it back by writing it. Two threads each add to a
// shared counter 20 times inside that lock, and nothing else orders them. The recording writes
// each write and each read that got bytes as a sync operation on the pipe's channel, and the
// prediction counts the bytes as a semaphore's units, so it predicts no candidate (session 20's
// build, which knew the order only in replay, predicted the counter's pairs, and their replays
// found no error; before that, every replay confirmed a race on `counter`, as libuv's
// signal_multiple_loops confirmed 39 false findings).
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

// CHECK:     ilgen: 0 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s)
// CHECK:     ilgen: 0 finding(s) confirmed
// CHECK:     exit=0
