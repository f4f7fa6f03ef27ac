; Loop ranges: an access sweeping adjacent elements in a loop with a computable trip count and no
; instruction that may sync is recorded once, as the whole range, before the loop; and every case
; where that must not happen.
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@a = global [1000 x i32] zeroinitializer
@b = global [1000 x i32] zeroinitializer
@m = global [40 x i8] zeroinitializer
@d = global [1000 x double] zeroinitializer

declare void @unknown()
declare double @exp(double)
declare double @log(double) nobuiltin
declare double @reads(double) memory(read)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)

; a[i] = b[i] + 1 for i < n: b read and a written, n * 4 bytes each, before the loop; the same
; sites as the accesses; nothing in the loop.
; CHECK-LABEL: define void @sweep(
; CHECK: pre:
; CHECK: %[[LEN:.*]] = shl i64 %n, 2
; CHECK-NEXT: call void @__ilgen_read(ptr @b, i64 %[[LEN]], ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 16))
; CHECK-NEXT: call void @__ilgen_write(ptr @a, i64 %[[LEN]], ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 32))
; CHECK-NEXT: br label %loop
; CHECK: loop:
; CHECK-NOT: call void @__ilgen_
; CHECK: ret void
define void @sweep(i64 %n) {
entry:
  %go = icmp sgt i64 %n, 0
  br i1 %go, label %pre, label %exit
pre:
  br label %loop
loop:
  %i = phi i64 [ 0, %pre ], [ %next, %loop ]
  %pb = getelementptr inbounds [1000 x i32], ptr @b, i64 0, i64 %i
  %v = load i32, ptr %pb
  %w = add i32 %v, 1
  %pa = getelementptr inbounds [1000 x i32], ptr @a, i64 0, i64 %i
  store i32 %w, ptr %pa
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; NOT in a loop that takes a lock, nor in one that calls an unknown function: one hook per
; iteration, in the loop.
; CHECK-LABEL: define void @locked(
; CHECK: loop:
; CHECK: call i32 @__ilgen_wrap_pthread_mutex_lock(
; CHECK-NEXT: %pa = getelementptr
; CHECK-NEXT: call void @__ilgen_write(ptr %pa, i64 4,
; CHECK: loop2:
; CHECK-NEXT: %j = phi
; CHECK-NEXT: %pb = getelementptr
; CHECK-NEXT: call void @__ilgen_write(ptr %pb, i64 4,
; CHECK-NEXT: store i32 0, ptr %pb
; CHECK-NEXT: call void @unknown()
define void @locked(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %l = call i32 @pthread_mutex_lock(ptr @m)
  %pa = getelementptr inbounds [1000 x i32], ptr @a, i64 0, i64 %i
  store i32 0, ptr %pa
  %u = call i32 @pthread_mutex_unlock(ptr @m)
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %mid, label %loop
mid:
  br label %loop2
loop2:
  %j = phi i64 [ 0, %mid ], [ %jn, %loop2 ]
  %pb = getelementptr inbounds [1000 x i32], ptr @b, i64 0, i64 %j
  store i32 0, ptr %pb
  call void @unknown()
  %jn = add nuw nsw i64 %j, 1
  %jdone = icmp eq i64 %jn, %n
  br i1 %jdone, label %exit, label %loop2
exit:
  ret void
}

; NOT for a volatile access, an atomic one, a stride that skips bytes (every other element), or
; a loop with a second exit (a search that may stop early would not touch the whole range).
; CHECK-LABEL: define i32 @not_ranges(
; CHECK: loop:
; CHECK: call void @__ilgen_read(ptr %pa, i64 4,
; CHECK-NEXT: load volatile i32, ptr %pa
; CHECK: call void @__ilgen_atomic_read(ptr %pb, i64 4,
; CHECK-NEXT: load atomic i32, ptr %pb
; CHECK: call void @__ilgen_write(ptr %pc, i64 4,
; CHECK-NEXT: store i32 0, ptr %pc
; CHECK: search:
; CHECK-NEXT: %k = phi
; CHECK-NEXT: %ps = getelementptr
; CHECK-NEXT: call void @__ilgen_read(ptr %ps, i64 4,
define i32 @not_ranges(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %pa = getelementptr inbounds [1000 x i32], ptr @a, i64 0, i64 %i
  %va = load volatile i32, ptr %pa
  %pb = getelementptr inbounds [1000 x i32], ptr @b, i64 0, i64 %i
  %vb = load atomic i32, ptr %pb monotonic, align 4
  %twice = shl i64 %i, 1
  %pc = getelementptr inbounds [1000 x i32], ptr @a, i64 0, i64 %twice
  store i32 0, ptr %pc
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %mid, label %loop
mid:
  br label %search
search:
  %k = phi i64 [ 0, %mid ], [ %kn, %latch ]
  %ps = getelementptr inbounds [1000 x i32], ptr @b, i64 0, i64 %k
  %vs = load i32, ptr %ps
  %found = icmp eq i32 %vs, 7
  br i1 %found, label %exit, label %latch
latch:
  %kn = add nuw nsw i64 %k, 1
  %kdone = icmp eq i64 %kn, %n
  br i1 %kdone, label %exit, label %search
exit:
  %r = phi i32 [ 1, %search ], [ 0, %latch ]
  ret i32 %r
}

; A loop calling the C library's `exp`, which `inferattrs` (run by the pass first) gives
; memory(write), writing errno only: no call that may sync, so d[i] = exp(d[i]) is a range (read,
; then written) before the loop.
; CHECK-LABEL: define void @math(
; CHECK: pre:
; CHECK: call void @__ilgen_read(ptr @d, i64 %[[LEN:.*]], ptr
; CHECK-NEXT: call void @__ilgen_write(ptr @d, i64 %[[LEN]], ptr
; CHECK-NEXT: br label %loop
; CHECK: loop:
; CHECK-NOT: call void @__ilgen_
; CHECK: ret void
define void @math(i64 %n) {
entry:
  %go = icmp sgt i64 %n, 0
  br i1 %go, label %pre, label %exit
pre:
  br label %loop
loop:
  %i = phi i64 [ 0, %pre ], [ %next, %loop ]
  %p = getelementptr inbounds [1000 x double], ptr @d, i64 0, i64 %i
  %v = load double, ptr %p
  %e = call double @exp(double %v)
  store double %e, ptr %p
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; NOT across a function that may read memory (it may wait for another thread), nor across `log`
; declared `nobuiltin` (-fno-builtin: not the C library's, so nothing is inferred): a hook per
; iteration.
; CHECK-LABEL: define void @not_math(
; CHECK: loop:
; CHECK: call void @__ilgen_write(ptr %p, i64 8,
; CHECK-NEXT: store double %e, ptr %p
; CHECK: loop2:
; CHECK: call void @__ilgen_write(ptr %q, i64 8,
; CHECK-NEXT: store double %l, ptr %q
define void @not_math(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr inbounds [1000 x double], ptr @d, i64 0, i64 %i
  %e = call double @reads(double 1.0)
  store double %e, ptr %p
  %next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %mid, label %loop
mid:
  br label %loop2
loop2:
  %j = phi i64 [ 0, %mid ], [ %jn, %loop2 ]
  %q = getelementptr inbounds [1000 x double], ptr @d, i64 0, i64 %j
  %l = call double @log(double 2.0)
  store double %l, ptr %q
  %jn = add nuw nsw i64 %j, 1
  %jdone = icmp eq i64 %jn, %n
  br i1 %jdone, label %exit, label %loop2
exit:
  ret void
}
