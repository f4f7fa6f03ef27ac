// A candidate's schedule runs from the start of the run; the summary lists only its last
// 200 steps (the ones before the race that matter) and says how many came before, while
// schedule-1.json keeps every step for the replay. Both threads take m 150 times before the
// race on y, so the schedule has more than 600 steps: listed whole for each of a thousand
// candidates of a 96-thread run, the summary took 5 GiB.
//
// RUN: %ilgen cc -g -O0 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect --no-replay %t.trace; echo "exit=$?"' > %t.text
// RUN: FileCheck %s < %t.text
// RUN: grep -c '^    thread ' %t.text | FileCheck --check-prefix=LISTED %s
// RUN: %ilgen replay --print-env %t.trace:1 > /dev/null
// RUN: python3 -c "import json,re,sys; t=open('%t.text').read(); n=int(re.search(r'after (\d+);', t).group(1)); s=len(json.load(open('%t.trace/schedule-1.json'))['steps']); print('steps', s - n, 'hidden', 'over 400' if n > 400 else n)" | FileCheck --check-prefix=FILE %s
//
// The report of the confirmed race lists the same last 200 steps, numbered as in the schedule.
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' > %t.report
// RUN: FileCheck --check-prefix=REPORT %s < %t.report
//
// The JSON summary is the candidates file as written, whatever its size.
// RUN: sh -c '%ilgen detect --no-replay --format json %t.trace > %t.json; test $? = 66'
// RUN: cmp %t.json %t.trace/candidates.json
#include <pthread.h>

int y;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void take_m(void) {
  for (int i = 0; i < 150; i++) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  }
}

void *task(void *arg) {
  take_m();
  y = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, task, 0);
  take_m();
  y = 2;
  pthread_join(t, 0);
  return 0;
}

// CHECK: ilgen: 1 candidate(s): 1 race(s), 0 deadlock(s)
// CHECK: candidate 1: data race on y ({{0x[0-9a-f]+}}) (4 bytes)
// CHECK-NEXT: write by thread {{[01]}} at {{.*}}long_schedule_summary_tail.c:{{[0-9]+}} in {{main|task}}
// CHECK-NEXT: write by thread {{[01]}} at {{.*}}long_schedule_summary_tail.c:{{[0-9]+}} in {{main|task}}
// CHECK-NEXT: schedule (its last 200 steps, after {{[0-9]+}}; `ilgen replay` runs them all):
// CHECK-NEXT: thread {{[01]}}: {{lock|unlock|create|start}}
// CHECK: candidates written to {{.*}}candidates.json
// CHECK: exit=66
// LISTED: {{^}}200{{$}}
// FILE: steps 200 hidden over 400
// REPORT: WARNING: ilgen: data race
// REPORT: Location is global 'y' of size 4
// REPORT: Schedule that exposed it (candidate 1, replayed in {{.*}}replay-1):
// REPORT-NEXT: {{^    }}1-[[#HIDDEN:]]. (steps not listed; `ilgen replay` runs them)
// REPORT-NEXT: {{^    }}[[#HIDDEN+1]]. T{{[01]}} {{lock|unlock}} 'm' at {{.*}}long_schedule_summary_tail.c:{{[0-9]+}}
// REPORT: {{^    }}[[#HIDDEN+200]]. T{{[01]}}
// REPORT-NOT: {{^    [0-9]}}
// REPORT: exit=66
