// A thread pool shaped like real small C pools (issue 12, "reads keep their writers"): workers
// announce themselves by bumping a volatile `alive` that the creator spins on, sleep on a
// flag-and-condition "binary semaphore" until a job is queued, count themselves `working` under
// a count lock and signal `all_idle` when the last one goes idle. `pool_wait` reads the queue's
// length under the count lock while workers change it under the queue lock: a data race (TSan
// reports it when the wait overlaps the last jobs). In the recorded run the creator sleeps
// before waiting, so every job is done and the race is hidden by the recorded order. The spin on
// `alive` is a race of its own (a plain volatile read against the locked bump), reported too.
//
// Predicting it needs the other reads to keep what they saw (the spin on `alive`, the flag's wait
// loop, the `if (!working)` that decides a signal), else replay diverged before the race. After a
// schedule ends the program runs free, and main's read at 114 may then also meet the last pull's
// `queue_len = 0` (76): a real race, found by timing, so 2 or 3 findings.
//
// RUN: %ilgen cc -g -O2 %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: sh -c '%ilgen detect %t.trace; echo "exit=$?"' | FileCheck %s
// RUN: %ilgen cc -g -O0 %s -o %t0
// RUN: rm -rf %t0.trace && env ILGEN_OPTIONS=trace_dir=%t0.trace %t0
// RUN: sh -c '%ilgen detect %t0.trace; echo "exit=$?"' | FileCheck %s
//
// CHECK-DAG: #0 pool_wait {{.*}}pool_wait_len_race.c:114
// CHECK-DAG: #0 pull {{.*}}pool_wait_len_race.c:{{72|76}}
// CHECK-DAG: #0 main {{.*}}pool_wait_len_race.c:129
// CHECK-DAG: #0 worker {{.*}}pool_wait_len_race.c:86
// CHECK: ilgen: {{2|3}} finding(s) confirmed
// CHECK: exit=66

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

enum { WORKERS = 2, JOBS = 6 };

struct flag {
    pthread_mutex_t m;
    pthread_cond_t c;
    int v;
};

struct pool {
    volatile int alive, working, keepalive;
    int queue_len;
    pthread_mutex_t count_lock, queue_lock;
    pthread_cond_t all_idle;
    struct flag has_jobs;
    pthread_t threads[WORKERS];
};

static int done;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;

static void flag_post(struct flag *f) {
    pthread_mutex_lock(&f->m);
    f->v = 1;
    pthread_cond_signal(&f->c);
    pthread_mutex_unlock(&f->m);
}

static void flag_wait(struct flag *f) {
    pthread_mutex_lock(&f->m);
    while (f->v != 1)
        pthread_cond_wait(&f->c, &f->m);
    f->v = 0;
    pthread_mutex_unlock(&f->m);
}

static int pull(struct pool *p) {
    int got = 0;
    pthread_mutex_lock(&p->queue_lock);
    if (p->queue_len > 1) {
        p->queue_len--;
        got = 1;
        flag_post(&p->has_jobs);
    } else if (p->queue_len == 1) {
        p->queue_len = 0;
        got = 1;
    }
    pthread_mutex_unlock(&p->queue_lock);
    return got;
}

static void *worker(void *arg) {
    struct pool *p = arg;
    pthread_mutex_lock(&p->count_lock);
    p->alive++;
    pthread_mutex_unlock(&p->count_lock);
    for (;;) {
        flag_wait(&p->has_jobs);
        pthread_mutex_lock(&p->count_lock);
        if (!p->keepalive) {
            pthread_mutex_unlock(&p->count_lock);
            flag_post(&p->has_jobs); // wakes the next worker to leave
            break;
        }
        p->working++;
        pthread_mutex_unlock(&p->count_lock);
        if (pull(p)) {
            pthread_mutex_lock(&done_lock);
            done++;
            pthread_mutex_unlock(&done_lock);
        }
        pthread_mutex_lock(&p->count_lock);
        p->working--;
        if (!p->working)
            pthread_cond_signal(&p->all_idle);
        pthread_mutex_unlock(&p->count_lock);
    }
    return NULL;
}

static void pool_wait(struct pool *p) {
    pthread_mutex_lock(&p->count_lock);
    while (p->queue_len || p->working)
        pthread_cond_wait(&p->all_idle, &p->count_lock);
    pthread_mutex_unlock(&p->count_lock);
}

int main(void) {
    struct pool *p = calloc(1, sizeof *p);
    p->keepalive = 1;
    pthread_mutex_init(&p->count_lock, NULL);
    pthread_mutex_init(&p->queue_lock, NULL);
    pthread_cond_init(&p->all_idle, NULL);
    pthread_mutex_init(&p->has_jobs.m, NULL);
    pthread_cond_init(&p->has_jobs.c, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&p->threads[i], NULL, worker, p);
    while (p->alive != WORKERS) {
    }
    for (int i = 0; i < JOBS; i++) {
        pthread_mutex_lock(&p->queue_lock);
        p->queue_len++;
        flag_post(&p->has_jobs);
        pthread_mutex_unlock(&p->queue_lock);
    }
    usleep(200000);
    pool_wait(p);
    pthread_mutex_lock(&p->count_lock);
    p->keepalive = 0;
    pthread_mutex_unlock(&p->count_lock);
    flag_post(&p->has_jobs);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(p->threads[i], NULL);
    return done == JOBS ? 0 : 1;
}
