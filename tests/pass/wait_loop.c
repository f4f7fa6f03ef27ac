// A real condition-wait loop, compiled by clang with the plugin at -O0 and -O2: markers on the
// loop's entry and exit, the pthread calls rewritten, the site table emitted with this file's
// name. At -O0 `&q->cond` is recomputed inside the loop from a stack slot, so the markers carry
// rematerialized copies of that computation, never a null pointer. At -O2 loop rotation moves the
// first `!ready` test out of the loop; the markers, inserted at the start of the pipeline, stay
// around that test too, so a predicate that already holds still passes both markers.
// RUN: env ILGEN_PASS_OPTIONS=cover=0 %clang -g -O0 -fpass-plugin=%plugin -S -emit-llvm -o - %s | FileCheck %s --check-prefixes=CHECK,O0
// RUN: env ILGEN_PASS_OPTIONS=cover=0 %clang -g -O2 -fpass-plugin=%plugin -S -emit-llvm -o - %s | FileCheck %s --check-prefixes=CHECK,O2
#include <pthread.h>

struct queue {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int ready;
};

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;

// CHECK: @__ilgen_sites = private constant {{.*}}wait_loop.c\00{{.*}} section "ilgen_sites", align 16

// CHECK-LABEL: define {{.*}} @wait_global(
// CHECK: call i32 @__ilgen_wrap_pthread_mutex_lock(ptr @m, ptr getelementptr
// CHECK: call void @__ilgen_wait_loop_enter(ptr {{(nonnull )?}}@c, ptr getelementptr
// O2-NEXT: call void @__ilgen_read(ptr @ready,
// O2-NEXT: load i32, ptr @ready
// O2-NEXT: icmp eq i32
// O2-NEXT: br i1 %{{[0-9]+}}, label %[[WAIT:[0-9]+]], label %[[DONE:[0-9]+]]
// O2: [[WAIT]]:
// CHECK: call i32 @__ilgen_wrap_pthread_cond_wait(ptr @c, ptr @m, ptr getelementptr
// O2: [[DONE]]:
// O2-NEXT: call void @__ilgen_wait_loop_exit(ptr nonnull @c,
// O0: call void @__ilgen_wait_loop_exit(ptr @c, ptr getelementptr
// CHECK: call i32 @__ilgen_wrap_pthread_mutex_unlock(ptr @m,
// CHECK-NOT: call i32 @pthread_
// CHECK: ret void
void wait_global(void) {
  pthread_mutex_lock(&m);
  while (!ready)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
}

// CHECK-LABEL: define {{.*}} @wait_queue(
// CHECK: call i32 @__ilgen_wrap_pthread_mutex_lock(
// O0-NEXT: %[[Q1:[0-9]+]] = load ptr, ptr %{{[0-9]+}}
// O0-NEXT: %[[C1:[0-9]+]] = getelementptr inbounds %struct.queue, ptr %[[Q1]], i32 0, i32 1
// O0-NEXT: call void @__ilgen_wait_loop_enter(ptr %[[C1]],
// O2: %[[C:[0-9]+]] = getelementptr inbounds i8, ptr %0, i64 40
// O2: call void @__ilgen_wait_loop_enter(ptr nonnull %[[C]],
// CHECK: call i32 @__ilgen_wrap_pthread_cond_wait(
// O0: %[[Q2:[0-9]+]] = load ptr, ptr %{{[0-9]+}}
// O0-NEXT: %[[C2:[0-9]+]] = getelementptr inbounds %struct.queue, ptr %[[Q2]], i32 0, i32 1
// O0-NEXT: call void @__ilgen_wait_loop_exit(ptr %[[C2]],
// O2: call void @__ilgen_wait_loop_exit(ptr nonnull %[[C]],
// CHECK-NOT: __ilgen_wait_loop_{{.*}}(ptr null
// CHECK: ret void
void wait_queue(struct queue *q) {
  pthread_mutex_lock(&q->lock);
  while (!q->ready)
    pthread_cond_wait(&q->cond, &q->lock);
  pthread_mutex_unlock(&q->lock);
}
