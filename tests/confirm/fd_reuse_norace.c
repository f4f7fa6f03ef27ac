// Per-descriptor state handed on through a reused descriptor number, as servers keep it
// (memcached's `conns[fd]`): the first worker serves "connection" fd, writes its slot and closes
// it; main makes descriptors until it gets that number back (the kernel gives the lowest free
// one), then starts a second worker that serves the new connection in the same slot. No pthread
// operation orders the two workers' writes: only the close before the dup that returned the
// number. The prediction does not know that order, so it predicts the two writes the other way
// round (one candidate); replay must not confirm it: the kernel cannot give the number back
// before the close, and the replay's race detector orders the close before that dup, as the
// kernel does. (Without that order replay confirmed such pairs on memcached, whose conns[fd] is this.)
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s --check-prefix=PREDICTED
// RUN: sh -c '%ilgen detect -q --show-all %t.trace; echo "exit=$?"' | FileCheck %s
//
// PREDICTED: ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// PREDICTED: exit=66
// CHECK-NOT: WARNING: ilgen
// CHECK: ilgen: 1 candidate(s) replayed: 0 confirmed race(s), 0 confirmed deadlock(s), 1 no error, 0 infeasible, 0 failed
// CHECK: exit=0
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

struct conn {
  int requests;
};

static struct conn conns[64];

static void *serve(void *arg) {
  int fd = (int)(long)arg;
  conns[fd].requests = fd + 1;
  close(fd);
  return NULL;
}

int main(void) {
  int first = dup(1);
  if (first < 0 || first >= 64)
    return 2;
  pthread_t a, b;
  pthread_create(&a, NULL, serve, (void *)(long)first);
  int again;
  while ((again = dup(1)) != first) {
    close(again);
    usleep(1000);
  }
  pthread_create(&b, NULL, serve, (void *)(long)again);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("%d\n", conns[first].requests);
  return 0;
}
