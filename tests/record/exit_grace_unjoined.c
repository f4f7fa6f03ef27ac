// Four workers write `data` under a lock; main joins only three of them, reads `data` and
// returns. The fourth sleeps before its write, so main returns first. With the exit grace
// (default 200 ms) the fourth worker runs on to its end and its write is in the trace, before
// main's `exit`; with exit_grace_ms=0 the process ends while it sleeps (or before it
// started), and the trace has nothing of it but its start. The sleep (100 ms) is half the grace: a margin both ways on a
// loaded machine.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t | FileCheck --check-prefix=OUT %s
// RUN: %ilgen dump %t.trace | FileCheck --check-prefix=GRACE %s
// The sync events in sequence order: the worker's steps in the grace come before main's exit.
// RUN: %ilgen dump %t.trace | sed -n 's/^\(T[0-9]* [a-z]*\).* seq=\([0-9]*\).*/\2 \1/p' \
// RUN:   | sort -n | FileCheck --check-prefix=ORDER %s
// RUN: rm -rf %t.nograce && env ILGEN_OPTIONS=trace_dir=%t.nograce:exit_grace_ms=0 %t
// RUN: %ilgen dump %t.nograce | FileCheck --check-prefix=NOGRACE %s
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int data;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  if (arg)
    usleep(100 * 1000);
  pthread_mutex_lock(&m);
  data++;
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    pthread_create(&t[i], NULL, worker, i == 3 ? &t[i] : NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
  printf("data=%d\n", data);
  return 0;
}

// OUT: data={{[34]}}

// GRACE:      run binary={{.*}} end=exit threads=5
// GRACE:      T0 read data size=4 at {{.*}}exit_grace_unjoined.c:38:23 main
// GRACE-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exit_grace_unjoined.c:39:3 main
// GRACE-NEXT: T1 thread parent=T0 child=0
// GRACE:      T4 thread parent=T0 child=3
// GRACE-NEXT: T4 start seq={{[0-9]+}}
// GRACE-NEXT: T4 lock m seq={{[0-9]+}} at {{.*}}exit_grace_unjoined.c:26:3 worker
// GRACE-NEXT: T4 write data size=4 at {{.*}}exit_grace_unjoined.c:27:7 worker
// GRACE-NEXT: T4 unlock m seq={{[0-9]+}} at {{.*}}exit_grace_unjoined.c:28:3 worker
// GRACE-NEXT: T4 end seq={{[0-9]+}}
// GRACE-NOT:  {{.}}

// ORDER:      {{[0-9]+}} T4 lock
// ORDER-NEXT: {{[0-9]+}} T4 unlock
// ORDER-NEXT: {{[0-9]+}} T4 end
// ORDER-NEXT: {{[0-9]+}} T0 exit
// ORDER-NOT:  {{.}}

// NOGRACE:      T0 exit seq={{[0-9]+}} at {{.*}}exit_grace_unjoined.c:39:3 main
// NOGRACE-NOT:  T4 {{lock|write|unlock|end}}
