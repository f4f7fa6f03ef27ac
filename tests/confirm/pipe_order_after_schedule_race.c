// A thread whose next step waits for another thread through an order the trace does not show
// (here a pipe written with writev, which the runtime does not see, where a write is a sync
// operation; in a server, the client process that sends the next request only once another
// worker replied) gets it: the threads that wait at the gate for the end of the schedule run once
// the schedule stops moving. `server` reads a request from the pipe, then locks `m` and writes
// `served`; main reads `served` after its own critical section: a race. Its schedule needs
// server's lock and no operation of `client`, which the gate holds until the schedule ends, and
// server's read waits for client's write. Before, every replay ended "step 5 (T1 operation #1
// lock ...) was not taken within 2000 ms" (infeasible).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
#include <pthread.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;
int fds[2];
int served;
long requests;

void *client(void *arg) {
  pthread_mutex_lock(&stats);
  requests++;
  pthread_mutex_unlock(&stats);
  struct iovec request = {.iov_base = "r", .iov_len = 1};
  if (writev(fds[1], &request, 1) != 1)
    return NULL;
  return arg;
}

void *server(void *arg) {
  char c;
  if (read(fds[0], &c, 1) != 1)
    return NULL;
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  served = 1;
  return arg;
}

int main(void) {
  if (pipe(fds) != 0)
    return 1;
  pthread_t s, c;
  pthread_create(&s, NULL, server, NULL);
  pthread_create(&c, NULL, client, NULL);
  pthread_mutex_lock(&m);
  pthread_mutex_unlock(&m);
  printf("served %d\n", served);
  pthread_join(s, NULL);
  pthread_join(c, NULL);
  return 0;
}

// RECORDED: served {{[01]}}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-DAG:    #0 server /{{.*}}pipe_order_after_schedule_race.c:42
// CHECK-DAG:    #0 main /{{.*}}pipe_order_after_schedule_race.c:54
// CHECK:        Location is global 'served' of size 4 at 0x{{[0-9a-f]+}}.
// CHECK:        Schedule that exposed it (candidate 1, replayed in /{{.*}}.trace/replay-1):
// CHECK-NOT:    {{[0-9]+}}. T2 {{start|lock|unlock}}
// CHECK:      SUMMARY: ilgen: data race /{{.*}}pipe_order_after_schedule_race.c:{{42|54}} in {{server|main}}
// CHECK:      ilgen: 1 candidate(s) replayed: 1 confirmed race(s), 0 confirmed deadlock(s), 0 no error, 0 infeasible, 0 failed
// CHECK-NEXT: ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: exit=66
