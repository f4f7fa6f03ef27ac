// A server's shutdown by signal (memcached's `shutdown` command raises SIGINT): a worker raises
// SIGINT, whose handler sets `stop` with no lock, and main's loop reads `stop` between its ticks:
// the race TSan reports in every run of memcached. detect confirms it by replay. Replays used to
// start with SIGINT, SIGTERM and SIGHUP blocked (ilgen blocks them for its own watcher and a
// signal mask survives exec): the raised SIGINT stayed pending, main never stopped, and the
// replay ran into --replay-timeout (failed, nothing confirmed). Replayed programs now start with
// the mask ilgen had before; the replay also shows the handler ran (it prints the mask it saw).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck %s --check-prefix=OUT
// RUN: sh -c '%ilgen detect --replay-timeout 20 %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: cat %t.trace/replay-1/stdout.txt | FileCheck %s --check-prefix=OUT
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int ticks;

static void on_sigint(int sig) {
  (void)sig;
  stop = 1;
}

static void *worker(void *arg) {
  pthread_mutex_lock(&m);
  ticks++;
  pthread_mutex_unlock(&m);
  raise(SIGINT);
  return arg;
}

int main(void) {
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, NULL, &now);
  printf("SIGINT blocked at start: %d\n", sigismember(&now, SIGINT));
  signal(SIGINT, on_sigint);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  while (!stop) {
    pthread_mutex_lock(&m);
    ticks++;
    pthread_mutex_unlock(&m);
    usleep(1000);
  }
  pthread_join(t, NULL);
  printf("stopped by the handler\n");
  return 0;
}

// OUT: SIGINT blocked at start: 0
// OUT: stopped by the handler

// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:  #0 on_sigint {{.*}}signal_shutdown_race.c:24
// CHECK-DAG:  #0 main {{.*}}signal_shutdown_race.c:41
// CHECK:      ilgen: {{[0-9]+}} candidate(s) replayed: {{[1-9][0-9]*}} confirmed race(s)
// CHECK:      exit=66
