// A signal storm while threads start: a signal delivered to a new thread before the runtime has
// registered it must not make up a thread of its own (the child starts with signals blocked until
// it is registered). The trace has exactly main, the storm thread and the 200 workers, each
// forked by main.
//
// RUN: %ilgen cc -g -O0 %s -o %t && %clang -g -O0 %s -o %t.plain -lpthread
// RUN: sh %S/Inputs/unharmed.sh %t.plain %t %t.d '' | FileCheck %s
// RUN: %ilgen dump %t.d/recorded/trace | FileCheck --check-prefix=DUMP %s
// RUN: %ilgen dump %t.d/recorded/trace | grep -c ' thread parent=T0 ' | FileCheck --check-prefix=FORKED %s
// CHECK:      status 0 0
// CHECK-NEXT: output same
// CHECK-NEXT: plain files: {{$}}
// CHECK-NEXT: recorded files: ./trace {{$}}
// DUMP:       run binary={{.*}} end=exit threads=202
// FORKED:     201
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t hits, stop;

static void on_usr1(int sig) {
  (void)sig;
  hits++;
}

static void *worker(void *arg) { return arg; }

static void *storm(void *arg) {
  (void)arg;
  while (!stop)
    kill(getpid(), SIGUSR1);
  return NULL;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t s, t;
  pthread_create(&s, NULL, storm, NULL);
  for (int i = 0; i < 200; i++) {
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
  }
  stop = 1;
  pthread_join(s, NULL);
  printf("200 threads started and joined\n");
  return 0;
}
