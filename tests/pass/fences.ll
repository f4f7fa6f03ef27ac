; Thread fences: a relaxed atomic read before an acquire fence acquires, a relaxed atomic write
; after a release fence releases (bits as in memory.ll: 1 acquires, 2 released, 4 a
; read-modify-write, 8 writes); signal fences and operations on the fence's other side keep
; their own order.
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

; The message-passing idiom's consumer: the flag's relaxed load acquires; the data read after
; the fence is plain, and a relaxed load after the fence stays relaxed.
; CHECK-LABEL: define i32 @consume(
; CHECK: [[T1:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %flag, i64 4, {{.*}}, i64 0)
; CHECK-NEXT: %f = load atomic i32, ptr %flag monotonic
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %flag, i64 4, {{.*}}, i64 1, i64 [[T1]])
; CHECK: fence acquire
; CHECK-NEXT: call void @__ilgen_read(ptr %data, i64 4,
; CHECK-NEXT: %d = load i32, ptr %data
; CHECK-NEXT: call void @__ilgen_atomic_read(ptr %flag, i64 4,
; CHECK-NEXT: %g = load atomic i32, ptr %flag monotonic
define i32 @consume(ptr %flag, ptr %data) {
entry:
  %f = load atomic i32, ptr %flag monotonic, align 4
  %set = icmp ne i32 %f, 0
  br i1 %set, label %ready, label %none

ready:
  fence acquire
  %d = load i32, ptr %data, align 4
  %g = load atomic i32, ptr %flag monotonic, align 4
  %s = add i32 %d, %g
  ret i32 %s

none:
  ret i32 0
}

; The producer: the relaxed store and exchange after the release fence release; the relaxed
; store before it does not; a compare-exchange releases only when it succeeded.
; CHECK-LABEL: define void @produce(
; CHECK: call void @__ilgen_atomic_write(ptr %flag, i64 4,
; CHECK-NEXT: store atomic i32 0, ptr %flag monotonic
; CHECK: fence release
; CHECK-NEXT: [[T2:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %flag, i64 4, {{.*}}, i64 1)
; CHECK-NEXT: store atomic i32 1, ptr %flag monotonic
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %flag, i64 4, {{.*}}, i64 10, i64 [[T2]])
; CHECK: [[T3:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %flag, i64 4, {{.*}}, i64 1)
; CHECK-NEXT: %x = atomicrmw xchg ptr %flag, i32 2 monotonic
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %flag, i64 4, {{.*}}, i64 14, i64 [[T3]])
; CHECK: [[T4:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %flag, i64 4, {{.*}}, i64 1)
; CHECK-NEXT: %c = cmpxchg ptr %flag, i32 2, i32 3 monotonic monotonic
; CHECK-NEXT: [[OK:%[0-9]+]] = extractvalue { i32, i1 } %c, 1
; CHECK-NEXT: [[HOW:%[0-9]+]] = select i1 [[OK]], i64 14, i64 12
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %flag, i64 4, {{.*}}, i64 [[HOW]], i64 [[T4]])
define void @produce(ptr %flag, ptr %data) {
  store atomic i32 0, ptr %flag monotonic, align 4
  store i32 42, ptr %data, align 4
  fence release
  store atomic i32 1, ptr %flag monotonic, align 4
  %x = atomicrmw xchg ptr %flag, i32 2 monotonic
  %c = cmpxchg ptr %flag, i32 2, i32 3 monotonic monotonic
  ret void
}

; A loop of relaxed loads before one acquire fence (a block's empty flags, read by its owner):
; each acquires, as the fence after the loop orders them all.
; CHECK-LABEL: define i1 @all_empty(
; CHECK: call i64 @__ilgen_atomic_enter(ptr %p, i64 1, {{.*}}, i64 0)
; CHECK-NEXT: %e = load atomic i8, ptr %p monotonic
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %p, i64 1, {{.*}}, i64 1,
define i1 @all_empty(ptr %flags, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr i8, ptr %flags, i64 %i
  %e = load atomic i8, ptr %p monotonic, align 1
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done

done:
  fence acquire
  ret i1 true
}

; A signal fence orders nothing between threads: the load stays relaxed.
; CHECK-LABEL: define i32 @signal_fence(
; CHECK: call void @__ilgen_atomic_read(ptr %flag, i64 4,
; CHECK-NEXT: %f = load atomic i32, ptr %flag monotonic
; CHECK-NEXT: fence syncscope("singlethread") acquire
define i32 @signal_fence(ptr %flag) {
  %f = load atomic i32, ptr %flag monotonic, align 4
  fence syncscope("singlethread") acquire
  ret i32 %f
}
