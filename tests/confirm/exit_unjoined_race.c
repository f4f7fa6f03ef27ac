// Four workers write `data` under a lock; main joins only three of them, then reads `data`
// without the lock and returns. The fourth worker sleeps first, so it is still asleep when main
// returns: without the exit grace it would have done nothing the trace could show. With it, its
// write is recorded (before main's exit), detect predicts it unordered with main's read, and the
// replay holds main's exit until the schedule is done and the worker has written: the race is
// confirmed, and the report names the join that is missing.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// The recorded trace: the worker's steps in the grace come before main's exit (sync events in
// sequence order); with exit_grace_ms=0 the process ends while the worker sleeps (or before it
// started), the trace has nothing of it but its start, and detect finds nothing.
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=GRACE
// RUN: %ilgen dump %t.trace | sed -n 's/^\(T[0-9]* [a-z]*\).* seq=\([0-9]*\).*/\2 \1/p' \
// RUN:   | sort -n | FileCheck --check-prefix=ORDER %s
// RUN: rm -rf %t.nograce && env ILGEN_OPTIONS=trace_dir=%t.nograce:exit_grace_ms=0 %t
// RUN: %ilgen dump %t.nograce | FileCheck %s --check-prefix=NOGRACE
// RUN: %ilgen detect %t.nograce | FileCheck %s --check-prefix=NOGRACE-DETECT
// RUN: sh -c '%ilgen detect --show-all %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: not %ilgen detect --format json %t.trace > %t.json
// RUN: python3 %S/Inputs/validate.py %S/Inputs/ilgen-report.schema.json %t.json | FileCheck %s --check-prefix=JSON-VALID
// RUN: FileCheck %s --check-prefix=JSON < %t.json
#include <pthread.h>
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
  return data == 3 ? 0 : 1;
}

// CHECK:      WARNING: ilgen: data race (pid={{[0-9]+}})
// CHECK-NEXT:   Write of size 4 at 0x[[A:[0-9a-f]+]] by thread T4:
// CHECK-NEXT:     #0 worker {{.*}}exit_unjoined_race.c:34:7
// CHECK-NEXT:     holding 'm' (0x{{[0-9a-f]+}}), acquired at:
// CHECK-NEXT:       #0 worker {{.*}}exit_unjoined_race.c:33:3
// CHECK-EMPTY:
// CHECK-NEXT:   Previous read of size 4 at 0x[[A]] by main thread:
// CHECK-NEXT:     #0 main {{.*}}exit_unjoined_race.c:45:10
// CHECK-EMPTY:
// CHECK-NEXT:   Location is global 'data' of size 4 at 0x[[A]].
// CHECK-EMPTY:
// CHECK-NEXT:   Thread T4 (tid=4) created by main thread at:
// CHECK-NEXT:     #0 main {{.*}}exit_unjoined_race.c:42:5
// CHECK-NEXT:   thread T4 was never joined (created at {{.*}}exit_unjoined_race.c:42)
// CHECK:      SUMMARY: ilgen: data race {{.*}}exit_unjoined_race.c:34 in worker
// CHECK:      ilgen: 1 finding(s) confirmed (deduplicated by source lines)
// CHECK-NEXT: thread T4 was never joined (created at {{.*}}exit_unjoined_race.c:42)
// CHECK-NEXT: exit=66

// JSON-VALID: valid: ilgen report, format version 11

// JSON:      "never_joined": true
// JSON:      "unjoined": [
// JSON-NEXT:   {
// JSON-NEXT:     "tid": 4,

// GRACE:      run binary={{.*}} end=exit threads=5
// GRACE:      T0 read data size=4 at {{.*}}exit_unjoined_race.c:45:10 main
// GRACE-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}exit_unjoined_race.c:45:3 main
// GRACE-NEXT: T1 thread parent=T0 child=0
// GRACE:      T4 thread parent=T0 child=3
// GRACE-NEXT: T4 start seq={{[0-9]+}}
// GRACE-NEXT: T4 stack {{0x[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}{{$}}
// GRACE-NEXT: T4 lock m seq={{[0-9]+}} at {{.*}}exit_unjoined_race.c:33:3 worker
// GRACE-NEXT: T4 write data size=4 at {{.*}}exit_unjoined_race.c:34:7 worker
// GRACE-NEXT: T4 unlock m seq={{[0-9]+}} at {{.*}}exit_unjoined_race.c:35:3 worker
// GRACE-NEXT: T4 end seq={{[0-9]+}}
// GRACE-NOT:  {{.}}

// ORDER:      {{[0-9]+}} T4 lock
// ORDER-NEXT: {{[0-9]+}} T4 unlock
// ORDER-NEXT: {{[0-9]+}} T4 end
// ORDER-NEXT: {{[0-9]+}} T0 exit
// ORDER-NOT:  {{.}}

// NOGRACE:     T0 exit seq={{[0-9]+}} at {{.*}}exit_unjoined_race.c:45:3 main
// NOGRACE-NOT: T4 {{lock|write|unlock|end}}

// NOGRACE-DETECT: ilgen: 0 candidate(s) replayed: 0 confirmed race(s)
