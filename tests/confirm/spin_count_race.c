// The start-up wait of C-Thread-Pool (thpool.c, benchmarks/real): main spins on a volatile count
// of live workers without the lock the workers increment it under. TSan reports that read against
// the increment in every run of the real program; ilgen must predict and confirm the same pair
// from one recorded run (in the real program its detect ran out of time, see RESULTS.md).
//
// RUN: %ilgen cc -g -O2 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
#include <pthread.h>
#include <stdlib.h>

struct pool {
  volatile int alive;
  pthread_mutex_t count_lock;
};

static void *worker(void *arg) {
  struct pool *p = arg;
  pthread_mutex_lock(&p->count_lock);
  p->alive += 1;
  pthread_mutex_unlock(&p->count_lock);
  return NULL;
}

int main(void) {
  struct pool *p = malloc(sizeof *p);
  pthread_t t[2];
  p->alive = 0;
  pthread_mutex_init(&p->count_lock, NULL);
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], NULL, worker, p);
  while (p->alive != 2) {
  }
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], NULL);
  free(p);
  return 0;
}

// Replay may reach either access second: each side is checked, not which one is current.
// CHECK:      WARNING: ilgen: data race
// CHECK-DAG:  {{Read|read}} of size 4 at 0x{{[0-9a-f]+}} by main thread:
// CHECK-DAG:  #0 main {{.*}}spin_count_race.c:32
// CHECK-DAG:  {{Write|write}} of size 4 at 0x{{[0-9a-f]+}} by thread T{{[12]}}:
// CHECK-DAG:  #0 worker {{.*}}spin_count_race.c:20
// CHECK:      SUMMARY: ilgen: data race {{.*}}spin_count_race.c:{{32 in main|20 in worker}}
// CHECK:      ilgen: 1 finding(s) confirmed
// CHECK-NEXT: exit=66
