// A thread's exit() ends the process like main's return: main waits in pthread_join for a
// waiter that waits forever on a condition variable nobody signals, and a third thread calls
// exit(). Neither blocked thread is a deadlock: the process ended. Both solvers agree (the CSP
// model ends the exiting thread in EXITED, as it ends main).
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace
// RUN: sh -c 'ILGEN_OPTIONS=trace_dir=%t.trace %t; echo "exit=$?"' | FileCheck %s --check-prefix=STATUS
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t never = PTHREAD_COND_INITIALIZER;

void *waiter(void *arg) {
  pthread_mutex_lock(&m);
  pthread_cond_wait(&never, &m);
  pthread_mutex_unlock(&m);
  return arg;
}

void *quitter(void *arg) {
  usleep(50 * 1000);
  exit(4);
  return arg;
}

int main(void) {
  pthread_t w, q;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&q, NULL, quitter, NULL);
  pthread_join(w, NULL);
  return 0;
}

// STATUS: exit=4

// RECORDED: T0 join T1 PENDING
// RECORDED: T1 wake never mutex=m PENDING
// RECORDED: T2 exit seq={{[0-9]+}} at {{.*}}exit_from_thread_nodeadlock.c:28:3 quitter

// CHECK:      ilgen: 0 candidate(s): 0 race(s), 0 deadlock(s)
// CHECK:      exit=0
