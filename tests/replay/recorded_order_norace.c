// Every kind of sync operation, replayed in exactly the order the recorded run obeyed: the schedule
// is followed to its end, every time, and nothing is reported: each shared variable is ordered by
// the primitive that protects it (condition variable and its mutex, barrier, semaphore, rwlock,
// spin lock, trylock, an atomic flag), which the online detector must all understand. Main waits
// (on an atomic flag the consumer sets while it holds m) before it locks m and signals, so the
// recorded run has the consumer inside pthread_cond_wait (checked below): the replay then needs
// the wake to be gated after its real call returns.
//
// RUN: %ilgen cc -g -O0 -I %testinc %s -o %t
// RUN: rm -rf %t.trace && env ILGEN_OPTIONS=trace_dir=%t.trace %t
// RUN: %ilgen dump %t.trace | FileCheck %s --check-prefix=RECORDED
// RUN: python3 %S/Inputs/schedule.py %t.trace --recorded > %t.json
// RUN: bash -c 'for i in $(seq 5); do env ILGEN_OPTIONS=mode=replay:schedule=%t.json:trace_dir=%t.trace %t; echo "exit status $?"; python3 %S/Inputs/findings.py %t.trace; done' 2>&1 \
// RUN:   | sort | uniq -c | FileCheck %s
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

int ready, under_m, after_barrier, after_sem, under_rw, under_spin, under_try, message;
atomic_int flag, waiting;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
pthread_barrier_t b;
sem_t s;
pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
pthread_spinlock_t sp;

void *consumer(void *arg) {
  pthread_mutex_lock(&m);
  atomic_store(&waiting, 1);
  while (!ready)
    pthread_cond_wait(&c, &m);
  under_m++;
  pthread_mutex_unlock(&m);
  pthread_barrier_wait(&b);
  after_barrier++;
  sem_wait(&s);
  after_sem++;
  pthread_rwlock_rdlock(&rw);
  int seen = under_rw;
  pthread_rwlock_unlock(&rw);
  pthread_spin_lock(&sp);
  under_spin++;
  pthread_spin_unlock(&sp);
  if (pthread_mutex_trylock(&m) == 0) {
    under_try++;
    pthread_mutex_unlock(&m);
  }
  while (!atomic_load(&flag))
    ;
  message++;
  return (void *)(long)seen;
}

int main(void) {
  pthread_t t;
  pthread_barrier_init(&b, NULL, 2);
  sem_init(&s, 0, 0);
  pthread_spin_init(&sp, 0);
  pthread_create(&t, NULL, consumer, NULL);
  while (!atomic_load(&waiting))
    ;
  pthread_mutex_lock(&m);
  under_m++;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  after_barrier++;
  pthread_barrier_wait(&b);
  after_sem++;
  sem_post(&s);
  pthread_rwlock_wrlock(&rw);
  under_rw = 1;
  pthread_rwlock_unlock(&rw);
  pthread_spin_lock(&sp);
  under_spin++;
  pthread_spin_unlock(&sp);
  pthread_mutex_lock(&m);
  under_try++;
  pthread_mutex_unlock(&m);
  message++;
  atomic_store(&flag, 1);
  pthread_join(t, NULL);
  return 0;
}

// RECORDED:      T1 waitloop_enter c
// RECORDED:      T1 wait c
// RECORDED-NEXT: T1 wake c

// CHECK-NOT: WARNING
// CHECK-NOT: diverged
// CHECK:     {{^ *}}5 exit status 0
// CHECK-NEXT: {{^ *}}5 no_error [[N:[0-9]+]]/[[N]]{{$}}
// CHECK-NOT: {{.}}

// The CSP back end decides the recorded run as the native solver does (tests/csp).
// RUN: python3 %S/../csp/Inputs/solvers_agree.py %ilgen %t.trace
