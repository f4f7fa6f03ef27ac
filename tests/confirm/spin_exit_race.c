// A plain spin wait, as C-Thread-Pool's thpool_init waits for num_threads_alive: main spins on a
// volatile count of live workers, with no sync operation in the loop, until both have bumped it
// under a lock; then it sets `config` under `config_lock`. The reader reads `config` after its
// bump and before it takes `config_lock` itself: in the recorded run its critical section comes
// first and orders the read before main's write, but had main's come first, the read would race
// with the write. The recorder keeps only the first read of `alive` in main's segment (it saw
// 0): no write ended before it, and nothing ties main's next event to the bumps. The pass flags
// the loop as a spin, and the analysis keeps every bump its segment saw before main's next sync
// operation. Without that, the race's cut leaves out the idle worker (nothing else needs it), the
// schedule gives main `config_lock` while that worker waits at the gate for its turn, main spins
// forever and the replay fails. The spin is a race of its own (a plain volatile read against the
// locked bump), reported too.
//
// RUN: %ilgen cc -g -O2 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 %s -o %t0
// RUN: rm -rf %t0.trace && env ILGEN_OPTIONS=trace_dir=%t0.trace %t0
// RUN: sh -c '%ilgen detect %t0.trace; echo "exit=$?"' | FileCheck %s
//
// CHECK-DAG: #0 main {{.*}}spin_exit_race.c:64
// CHECK-DAG: #0 reader {{.*}}spin_exit_race.c:45
// CHECK-DAG: #0 main {{.*}}spin_exit_race.c:61
// CHECK-DAG: #0 bump {{.*}}spin_exit_race.c:38
// CHECK: ilgen: 2 finding(s) confirmed
// CHECK: exit=66

#include <pthread.h>
#include <stddef.h>

volatile int alive;
int config;
pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;

static void bump(void) {
    pthread_mutex_lock(&count_lock);
    alive++;
    pthread_mutex_unlock(&count_lock);
}

static void *reader(void *arg) {
    (void)arg;
    bump();
    int seen = config;
    pthread_mutex_lock(&config_lock);
    pthread_mutex_unlock(&config_lock);
    return (void *)(long)seen;
}

static void *idle(void *arg) {
    (void)arg;
    bump();
    return NULL;
}

int main(void) {
    pthread_t r, i;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&i, NULL, idle, NULL);
    while (alive != 2) {
    }
    pthread_mutex_lock(&config_lock);
    config = 1;
    pthread_mutex_unlock(&config_lock);
    pthread_join(r, NULL);
    pthread_join(i, NULL);
    return 0;
}
