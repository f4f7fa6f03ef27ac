// A plain spin wait (spin_exit_race.c's) that leaves while the write it waited for is still inside
// its critical section: the worker bumps `alive` under `count_lock`, main sees 1 and takes
// `config_lock`, and only then does the worker unlock (a test barrier, never recorded, holds the
// worker there until main has the lock). The recorded order so has the worker's unlock after
// main's next sync operation: no writing segment of the worker ended before main went on. The
// analysis keeps the start of a writing section still open when the spin left (the worker's lock)
// before main's next event, so the config race's schedule runs the worker's lock and its replay
// follows the schedule by itself. Without that rule the schedule left the worker out: its replay
// spun until the watchdog let the waiting worker go (about 8 s here, both races still confirmed),
// and in 1 of 12 recordings of spin_exit_race.c, where the second bump's unlock came late, the
// config race's replay then proved only the spin's race (the unit test
// `a_spin_keeps_the_start_of_a_writing_section_still_open_when_it_left` fails without it). The
// spin is a race of its own, reported too.
//
// RUN: %ilgen cc -g -O2 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
//
// CHECK-DAG: #0 main {{.*}}spin_exit_open_section_race.c:63
// CHECK-DAG: #0 reader {{.*}}spin_exit_open_section_race.c:39
// CHECK-DAG: #0 main {{.*}}spin_exit_open_section_race.c:59
// CHECK-DAG: #0 worker {{.*}}spin_exit_open_section_race.c:48
// CHECK: ilgen: 2 finding(s) confirmed
// CHECK: exit=66

#include <pthread.h>
#include <stddef.h>

#include "ilgen_test.h"

volatile int alive;
int config;
pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static ilgen_test_barrier_t main_locked;

static void *reader(void *arg) {
    (void)arg;
    int seen = config;
    pthread_mutex_lock(&config_lock);
    pthread_mutex_unlock(&config_lock);
    return (void *)(long)seen;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&count_lock);
    alive++;
    __ilgen_testonly_barrier_wait(&main_locked);
    pthread_mutex_unlock(&count_lock);
    return NULL;
}

int main(void) {
    __ilgen_testonly_barrier_init(&main_locked, 2);
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, worker, NULL);
    while (alive != 1) {
    }
    pthread_mutex_lock(&config_lock);
    __ilgen_testonly_barrier_wait(&main_locked);
    config = 1;
    pthread_mutex_unlock(&config_lock);
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    return 0;
}
