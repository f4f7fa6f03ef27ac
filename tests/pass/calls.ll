; Calls of WRAPPED_CALLS become __ilgen_wrap_NAME(args..., site); call and invoke alike.
; RUN: env 'ILGEN_PASS_OPTIONS=stacks=0;calls=0' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@m = global [40 x i8] zeroinitializer

declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare ptr @memcpy(ptr, ptr, i64)
declare i64 @strlen(ptr)
declare i32 @__gxx_personality_v0(...)

; The sites of all rewritten calls share the module's blob.
; CHECK: @__ilgen_sites = private constant {{.*}} section "ilgen_sites", align 16

; CHECK-LABEL: define i64 @sync_and_strings(
; CHECK: %r = call i32 @__ilgen_wrap_pthread_mutex_lock(ptr @m, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 16))
; CHECK-NEXT: %n = call i64 @__ilgen_wrap_strlen(ptr %s, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 32))
; CHECK-NEXT: %d = call ptr @__ilgen_wrap_memcpy(ptr %dst, ptr %s, i64 %n, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 48))
; CHECK-NEXT: call i32 @__ilgen_wrap_pthread_mutex_unlock(ptr @m, ptr
; The originals are gone.
; CHECK-NOT: call {{.*}} @pthread_mutex_lock(
; CHECK-NOT: call {{.*}} @strlen(
; CHECK: ret i64 %n
define i64 @sync_and_strings(ptr %dst, ptr %s) {
  %r = call i32 @pthread_mutex_lock(ptr @m)
  %n = call i64 @strlen(ptr %s)
  %d = call ptr @memcpy(ptr %dst, ptr %s, i64 %n)
  call i32 @pthread_mutex_unlock(ptr @m)
  ret i64 %n
}

; CHECK-LABEL: define i32 @with_invoke(
; CHECK: %r = invoke i32 @__ilgen_wrap_pthread_mutex_lock(ptr @m, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64
; CHECK-NEXT: to label %ok unwind label %lp
define i32 @with_invoke() personality ptr @__gxx_personality_v0 {
  %r = invoke i32 @pthread_mutex_lock(ptr @m)
          to label %ok unwind label %lp
ok:
  ret i32 %r
lp:
  %l = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %l
}

; A program's own definition of a wrapped name is its own function: calls to it stay.
; CHECK-LABEL: define i32 @calls_own(
; CHECK: call i32 @strcmp(
define i32 @strcmp(ptr %a, ptr %b) {
  ret i32 0
}
define i32 @calls_own(ptr %a) {
  %r = call i32 @strcmp(ptr %a, ptr %a)
  ret i32 %r
}

; sem_init is wrapped; sem_open is variadic, so it stays and the hook after it gets its result.
; CHECK-LABEL: define ptr @semaphores(
; CHECK: %i = call i32 @__ilgen_wrap_sem_init(ptr %s, i32 0, i32 2, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64
; CHECK-NEXT: %o = call ptr (ptr, i32, ...) @sem_open(ptr %name, i32 64, i32 384, i32 2)
; CHECK-NEXT: call void @__ilgen_sem_opened(ptr %o, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64
; CHECK-NEXT: ret ptr %o
declare i32 @sem_init(ptr, i32, i32)
declare ptr @sem_open(ptr, i32, ...)
define ptr @semaphores(ptr %s, ptr %name) {
  %i = call i32 @sem_init(ptr %s, i32 0, i32 2)
  %o = call ptr (ptr, i32, ...) @sem_open(ptr %name, i32 64, i32 384, i32 2)
  ret ptr %o
}

; The wrappers are declared with the callee's type plus the site pointer.
; CHECK-DAG: declare i32 @__ilgen_wrap_pthread_mutex_lock(ptr, ptr)
; CHECK-DAG: declare i64 @__ilgen_wrap_strlen(ptr, ptr)
; CHECK-DAG: declare ptr @__ilgen_wrap_memcpy(ptr, ptr, i64, ptr)
; CHECK-DAG: declare i32 @__ilgen_wrap_sem_init(ptr, i32, i32, ptr)
; CHECK-DAG: declare void @__ilgen_sem_opened(ptr, ptr)
