// Replay holds exit: main reads `data` and returns without joining its worker, which sleeps and
// then writes `data` under a lock. The recorded run (with the exit grace) has the worker's steps
// before main's exit. Replayed with the schedule fork, start, lock, unlock, exit, main's exit
// waits for its turn, so the worker's write comes after main's read with nothing ordering them:
// the detector reports the race, every time. Without the exit gated, main would have ended the
// process while the worker slept. A schedule that does not name the exit holds it too: a
// thread's operation outside an unfinished schedule waits for the schedule's end.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 1:2:unlock 0:1:exit > %t.json
// RUN: bash -c 'for i in $(seq 10); do env ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t 2>/dev/null; python3 %S/Inputs/findings.py %t.trace; done' \
// RUN:   | sort | uniq -c | FileCheck %s --check-prefix=REPEAT
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t 2>&1 \
// RUN:   | python3 %S/Inputs/sites.py %t | FileCheck %s
// RUN: python3 %S/Inputs/schedule.py %t.trace 0:0:fork 1:0:start 1:1:lock 1:2:unlock > %t.noexit.json
// RUN: env ILGEN_OPTIONS=mode=replay:schedule=%t.noexit.json:trace_dir=%t.trace %t 2>/dev/null
// RUN: python3 %S/Inputs/findings.py %t.trace | FileCheck %s --check-prefix=NOEXIT
#include <pthread.h>
#include <unistd.h>

int data;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  usleep(100 * 1000);
  pthread_mutex_lock(&m);
  data = 1;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  return data;
}

// RECORDED:      T0 fork T1
// RECORDED-NEXT: T0 read data size=4 at {{.*}}exit_held.c:37:10 main
// RECORDED-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exit_held.c:37:3 main
// RECORDED-NEXT: T1 thread parent=T0 child=0
// RECORDED-NEXT: T1 start
// RECORDED-NEXT: T1 lock m
// RECORDED-NEXT: T1 write data
// RECORDED-NEXT: T1 unlock m
// RECORDED-NEXT: T1 end

// REPEAT:     {{^ *}}10 race 5/5 Write:T1:[[W:[0-9]+]]/Read:T0:[[R:[0-9]+]]{{$}}
// REPEAT-NOT: {{.}}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 4 at 0x[[D:[0-9a-f]+]] by thread T1:
// CHECK-NEXT:     #0 site {{[0-9]+}} (exit_held.c:29)
// CHECK-EMPTY:
// CHECK-NEXT:   Previous read of size 4 at 0x[[D]] by thread T0:
// CHECK-NEXT:     #0 site {{[0-9]+}} (exit_held.c:37)
// CHECK-NOT:  WARNING

// NOEXIT: race 4/4 Write:T1:{{[0-9]+}}/Read:T0:{{[0-9]+}}{{$}}
