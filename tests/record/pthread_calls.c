// Every pthread call ilgen wraps is recorded as its own sync event, with its object, outcome
// (acquired/failed for try and timed operations) and source line: thread create/join/exit/detach,
// normal and recursive mutexes, rwlocks, condition variables, barriers, spinlocks, semaphores.
// Test barriers (unrecorded) make the condition wait really block, so wait and wake both appear.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include "ilgen_test.h"

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t rec;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
pthread_barrier_t b;
pthread_spinlock_t sl;
sem_t s;
struct timespec deadline, past;
int flag;
pthread_t waiter_t, exiter_t, detached_t;
ilgen_test_barrier_t waiter_holds_m, detached_started;

void *waiter(void *arg) {
  pthread_mutex_lock(&m);
  __ilgen_testonly_barrier_wait(&waiter_holds_m);
  while (!flag)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  pthread_barrier_wait(&b);
  return arg;
}

void *exiter(void *arg) {
  pthread_exit(arg);
}

void *detached(void *arg) {
  __ilgen_testonly_barrier_wait(&detached_started);
  return arg;
}

static void mutexes(void) {
  pthread_mutex_lock(&m);
  pthread_mutex_trylock(&m);
  pthread_mutex_unlock(&m);
  pthread_mutex_trylock(&m);
  pthread_mutex_unlock(&m);
  pthread_mutex_timedlock(&m, &deadline);
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&rec);
  pthread_mutex_lock(&rec);
  pthread_mutex_trylock(&rec);
  pthread_mutex_unlock(&rec);
  pthread_mutex_unlock(&rec);
  pthread_mutex_unlock(&rec);
}

static void rwlocks(void) {
  pthread_rwlock_rdlock(&rw);
  pthread_rwlock_unlock(&rw);
  pthread_rwlock_wrlock(&rw);
  pthread_rwlock_unlock(&rw);
  pthread_rwlock_tryrdlock(&rw);
  pthread_rwlock_unlock(&rw);
  pthread_rwlock_trywrlock(&rw);
  pthread_rwlock_unlock(&rw);
}

static void conds(void) {
  pthread_create(&waiter_t, NULL, waiter, NULL);
  // The waiter holds m until it waits on c: main's lock returns only then.
  __ilgen_testonly_barrier_wait(&waiter_holds_m);
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_cond_broadcast(&c);
  // A deadline in 1970 has passed: the wait returns at once, timed out.
  pthread_mutex_lock(&m);
  pthread_cond_timedwait(&c, &m, &past);
  pthread_mutex_unlock(&m);
  pthread_barrier_wait(&b);
  pthread_join(waiter_t, NULL);
}

static void spins_and_sems(void) {
  pthread_spin_lock(&sl);
  pthread_spin_unlock(&sl);
  pthread_spin_trylock(&sl);
  pthread_spin_unlock(&sl);
  sem_wait(&s);
  sem_trywait(&s);
  sem_post(&s);
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&rec, &attr);
  pthread_barrier_init(&b, NULL, 2);
  pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE);
  sem_init(&s, 0, 1);
  __ilgen_testonly_barrier_init(&waiter_holds_m, 2);
  __ilgen_testonly_barrier_init(&detached_started, 2);
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 60;

  mutexes();
  rwlocks();
  conds();
  spins_and_sems();
  pthread_create(&exiter_t, NULL, exiter, NULL);
  pthread_join(exiter_t, NULL);
  pthread_create(&detached_t, NULL, detached, NULL);
  pthread_detach(detached_t);
  __ilgen_testonly_barrier_wait(&detached_started);
  return 0;
}

// CHECK:      run binary={{.*}} pid={{[0-9]+}} argv={{.*}} end=exit threads=4
// CHECK-NEXT: T0 thread main
// CHECK-NEXT: T0 sem_init s count=1 seq={{[0-9]+}} at {{.*}}pthread_calls.c:108:3 main
// CHECK-NEXT: T0 write deadline size=8 at {{.*}}pthread_calls.c:112:{{[0-9]+}} main
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:48:3 mutexes
// CHECK-NEXT: T0 trylock m failed seq={{[0-9]+}} at {{.*}}pthread_calls.c:49:3 mutexes
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:50:3 mutexes
// CHECK-NEXT: T0 trylock m acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:51:3 mutexes
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:52:3 mutexes
// CHECK-NEXT: T0 timedlock m acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:53:3 mutexes
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:54:3 mutexes
// CHECK-NEXT: T0 lock rec seq={{[0-9]+}} at {{.*}}pthread_calls.c:55:3 mutexes
// CHECK-NEXT: T0 lock rec seq={{[0-9]+}} at {{.*}}pthread_calls.c:56:3 mutexes
// CHECK-NEXT: T0 trylock rec acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:57:3 mutexes
// CHECK-NEXT: T0 unlock rec seq={{[0-9]+}} at {{.*}}pthread_calls.c:58:3 mutexes
// CHECK-NEXT: T0 unlock rec seq={{[0-9]+}} at {{.*}}pthread_calls.c:59:3 mutexes
// CHECK-NEXT: T0 unlock rec seq={{[0-9]+}} at {{.*}}pthread_calls.c:60:3 mutexes
// CHECK-NEXT: T0 rdlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:64:3 rwlocks
// CHECK-NEXT: T0 rwunlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:65:3 rwlocks
// CHECK-NEXT: T0 wrlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:66:3 rwlocks
// CHECK-NEXT: T0 rwunlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:67:3 rwlocks
// CHECK-NEXT: T0 tryrdlock rw acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:68:3 rwlocks
// CHECK-NEXT: T0 rwunlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:69:3 rwlocks
// CHECK-NEXT: T0 trywrlock rw acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:70:3 rwlocks
// CHECK-NEXT: T0 rwunlock rw seq={{[0-9]+}} at {{.*}}pthread_calls.c:71:3 rwlocks
// CHECK-NEXT: T0 fork T1 seq={{[0-9]+}} at {{.*}}pthread_calls.c:75:3 conds
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:78:3 conds
// CHECK-NEXT: T0 write flag size=4 at {{.*}}pthread_calls.c:79:{{[0-9]+}} conds
// CHECK-NEXT: T0 signal c seq={{[0-9]+}} at {{.*}}pthread_calls.c:80:3 conds
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:81:3 conds
// CHECK-NEXT: T0 broadcast c seq={{[0-9]+}} at {{.*}}pthread_calls.c:82:3 conds
// CHECK-NEXT: T0 lock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:84:3 conds
// CHECK-NEXT: T0 wait c mutex=m timed seq={{[0-9]+}} at {{.*}}pthread_calls.c:85:3 conds
// CHECK-NEXT: T0 wake c mutex=m timed_out seq={{[0-9]+}} at {{.*}}pthread_calls.c:85:3 conds
// CHECK-NEXT: T0 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:86:3 conds
// CHECK-NEXT: T0 barrier_enter b seq={{[0-9]+}} at {{.*}}pthread_calls.c:87:3 conds
// CHECK-NEXT: T0 barrier_exit b{{( serial)?}} seq={{[0-9]+}} at {{.*}}pthread_calls.c:87:3 conds
// CHECK-NEXT: T0 read waiter_t size=8 at {{.*}}pthread_calls.c:88:{{[0-9]+}} conds
// CHECK-NEXT: T0 join T1 seq={{[0-9]+}} at {{.*}}pthread_calls.c:88:3 conds
// CHECK-NEXT: T0 spin_lock sl seq={{[0-9]+}} at {{.*}}pthread_calls.c:92:3 spins_and_sems
// CHECK-NEXT: T0 spin_unlock sl seq={{[0-9]+}} at {{.*}}pthread_calls.c:93:3 spins_and_sems
// CHECK-NEXT: T0 spin_trylock sl acquired seq={{[0-9]+}} at {{.*}}pthread_calls.c:94:3 spins_and_sems
// CHECK-NEXT: T0 spin_unlock sl seq={{[0-9]+}} at {{.*}}pthread_calls.c:95:3 spins_and_sems
// CHECK-NEXT: T0 sem_wait s seq={{[0-9]+}} at {{.*}}pthread_calls.c:96:3 spins_and_sems
// CHECK-NEXT: T0 sem_trywait s failed seq={{[0-9]+}} at {{.*}}pthread_calls.c:97:3 spins_and_sems
// CHECK-NEXT: T0 sem_post s seq={{[0-9]+}} at {{.*}}pthread_calls.c:98:3 spins_and_sems
// CHECK-NEXT: T0 fork T2 seq={{[0-9]+}} at {{.*}}pthread_calls.c:118:3 main
// CHECK-NEXT: T0 read exiter_t size=8 at {{.*}}pthread_calls.c:119:{{[0-9]+}} main
// CHECK-NEXT: T0 join T2 seq={{[0-9]+}} at {{.*}}pthread_calls.c:119:3 main
// CHECK-NEXT: T0 fork T3 seq={{[0-9]+}} at {{.*}}pthread_calls.c:120:3 main
// CHECK-NEXT: T0 read detached_t size=8 at {{.*}}pthread_calls.c:121:{{[0-9]+}} main
// CHECK-NEXT: T0 detach T3 seq={{[0-9]+}} at {{.*}}pthread_calls.c:121:3 main
// CHECK-NEXT: T0 exit seq={{[0-9]+}} at {{.*}}pthread_calls.c:123:3 main
// The loop markers carry the site of the loop (line 31) or of its wait call (line 32).
// CHECK-NEXT: T1 thread parent=T0 child=0
// CHECK-NEXT: T1 start seq={{[0-9]+}}
// CHECK-NEXT: T1 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T1 lock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:29:3 waiter
// CHECK-NEXT: T1 waitloop_enter c seq={{[0-9]+}} at {{.*}}pthread_calls.c:{{31|32}}:{{[0-9]+}} waiter
// CHECK-NEXT: T1 read flag size=4 at {{.*}}pthread_calls.c:31:{{[0-9]+}} waiter
// CHECK-NEXT: T1 wait c mutex=m seq={{[0-9]+}} at {{.*}}pthread_calls.c:32:5 waiter
// CHECK-NEXT: T1 wake c mutex=m seq={{[0-9]+}} at {{.*}}pthread_calls.c:32:5 waiter
// CHECK-NEXT: T1 read flag size=4 at {{.*}}pthread_calls.c:31:{{[0-9]+}} waiter
// CHECK-NEXT: T1 waitloop_exit c seq={{[0-9]+}} at {{.*}}pthread_calls.c:{{31|32}}:{{[0-9]+}} waiter
// CHECK-NEXT: T1 unlock m seq={{[0-9]+}} at {{.*}}pthread_calls.c:33:3 waiter
// CHECK-NEXT: T1 barrier_enter b seq={{[0-9]+}} at {{.*}}pthread_calls.c:34:3 waiter
// CHECK-NEXT: T1 barrier_exit b{{( serial)?}} seq={{[0-9]+}} at {{.*}}pthread_calls.c:34:3 waiter
// CHECK-NEXT: T1 end seq={{[0-9]+}}
// CHECK-NEXT: T2 thread parent=T0 child=1
// CHECK-NEXT: T2 start seq={{[0-9]+}}
// CHECK-NEXT: T2 stack 0x{{[0-9a-f]+}} size={{[0-9]+}} seq={{[0-9]+}}
// CHECK-NEXT: T2 end seq={{[0-9]+}}{{( at .*pthread_calls.c:39:3 exiter)?}}
// CHECK-NEXT: T3 thread parent=T0 child=2
// CHECK-NEXT: T3 start seq={{[0-9]+}}
// The detached thread may or may not record its end before the process exits.
