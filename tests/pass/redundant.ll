; Static redundancy elimination: an access covered by an earlier one of the same segment gets no
; hook, a read-modify-write gets one write hook; and every case where that must not happen.
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@x = global i32 0
@y = global i64 0
@m = global [40 x i8] zeroinitializer

declare void @unknown()
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare void @llvm.lifetime.start.p0(i64, ptr)
declare void @llvm.assume(i1)
; A library function LLVM knows never to synchronize (clang marks such builtins `nosync`).
declare double @pure_math(double) nosync

; x++: one read-modify-write hook before the load, with the load's and the store's sites, none
; before the store.
; CHECK-LABEL: define void @increment(
; CHECK-NEXT: call void @__ilgen_read_write(ptr @x, i64 4, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 {{[0-9]+}}), ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 {{[0-9]+}}))
; CHECK-NEXT: %v = load i32, ptr @x
; CHECK-NEXT: %w = add i32 %v, 1
; CHECK-NEXT: store i32 %w, ptr @x
; CHECK-NEXT: ret void
define void @increment() {
  %v = load i32, ptr @x
  %w = add i32 %v, 1
  store i32 %w, ptr @x
  ret void
}

; p->f += k through the same GEP, with a sync-free intrinsic between: one hook.
; CHECK-LABEL: define void @field_add(
; CHECK: call void @__ilgen_read_write(ptr %f, i64 8,
; CHECK-NEXT: %v = load i64, ptr %f
; CHECK-NOT: call void @__ilgen_
; CHECK: ret void
define void @field_add(ptr %p, i64 %k) {
  %f = getelementptr i8, ptr %p, i64 8
  %v = load i64, ptr %f
  call void @llvm.assume(i1 true)
  %w = add i64 %v, %k
  store i64 %w, ptr %f
  ret void
}

; A write covers later reads and writes of the same address; a read covers later reads; calls
; known to be sync-free (lifetime markers, a nosync function) end nothing.
; CHECK-LABEL: define i32 @covered(
; CHECK: call void @__ilgen_write(ptr %p, i64 4,
; CHECK-NEXT: store i32 1, ptr %p
; CHECK: call void @__ilgen_read(ptr %q, i64 4,
; CHECK-NEXT: %a = load i32, ptr %q
; CHECK-NOT: call void @__ilgen_
; CHECK: ret i32
define i32 @covered(ptr %p, ptr %q, double %d) {
  %slot = alloca i32
  store i32 1, ptr %p
  call void @llvm.lifetime.start.p0(i64 4, ptr %slot)
  %r = load i32, ptr %p
  store i32 2, ptr %p
  %a = load i32, ptr %q
  %s = call double @pure_math(double %d)
  %b = load i32, ptr %q
  %sum = add i32 %a, %b
  ret i32 %sum
}

; Across blocks: the entry's write dominates both reads of %x with no call on the way.
; CHECK-LABEL: define i32 @dominated(
; CHECK: call void @__ilgen_write(ptr @x, i64 4,
; CHECK-NOT: call void @__ilgen_
; CHECK: ret i32
define i32 @dominated(i1 %k) {
entry:
  store i32 0, ptr @x
  br i1 %k, label %then, label %join
then:
  %a = load i32, ptr @x
  br label %join
join:
  %b = load i32, ptr @x
  ret i32 %b
}

; NOT across a call that may synchronize: an unknown function, an indirect call, a lock.
; CHECK-LABEL: define void @calls_between(
; CHECK: call void @__ilgen_read(ptr @x, i64 4,
; CHECK-NEXT: %a = load i32, ptr @x
; CHECK-NEXT: call void @unknown()
; CHECK-NEXT: call void @__ilgen_read(ptr @x, i64 4,
; CHECK-NEXT: %b = load i32, ptr @x
; CHECK-NEXT: call void %fp()
; CHECK-NEXT: call void @__ilgen_read(ptr @x, i64 4,
; CHECK-NEXT: %c = load i32, ptr @x
; CHECK-NEXT: call i32 @__ilgen_wrap_pthread_mutex_lock(
; CHECK-NEXT: call void @__ilgen_write(ptr @x, i64 4,
; CHECK-NEXT: store i32 %c, ptr @x
; CHECK: ret void
define void @calls_between(ptr %fp) {
  %a = load i32, ptr @x
  call void @unknown()
  %b = load i32, ptr @x
  call void %fp()
  %c = load i32, ptr @x
  %l = call i32 @pthread_mutex_lock(ptr @m)
  store i32 %c, ptr @x
  %u = call i32 @pthread_mutex_unlock(ptr @m)
  ret void
}

; NOT across a lock in a block between the dominating access and the dominated one.
; CHECK-LABEL: define i32 @lock_on_a_path(
; CHECK: call void @__ilgen_write(ptr @x, i64 4,
; CHECK: call void @__ilgen_read(ptr @x, i64 4,
; CHECK-NEXT: %b = load i32, ptr @x
define i32 @lock_on_a_path(i1 %k) {
entry:
  store i32 0, ptr @x
  br i1 %k, label %locked, label %join
locked:
  %l = call i32 @pthread_mutex_lock(ptr @m)
  br label %join
join:
  %b = load i32, ptr @x
  ret i32 %b
}

; NOT for volatile accesses, in either role, nor for a read-modify-write made of them.
; CHECK-LABEL: define void @volatiles(
; CHECK: call void @__ilgen_read(ptr @x, i64 4,
; CHECK-NEXT: %a = load volatile i32, ptr @x
; CHECK-NEXT: call void @__ilgen_write(ptr @x, i64 4,
; CHECK-NEXT: store volatile i32 %a, ptr @x
; CHECK-NEXT: call void @__ilgen_write(ptr @x, i64 4,
; CHECK-NEXT: store i32 1, ptr @x
; CHECK-NEXT: call void @__ilgen_write(ptr @x, i64 4,
; CHECK-NEXT: store volatile i32 2, ptr @x
; CHECK-NEXT: ret void
define void @volatiles() {
  %a = load volatile i32, ptr @x
  store volatile i32 %a, ptr @x
  store i32 1, ptr @x
  store volatile i32 2, ptr @x
  ret void
}

; NOT for atomics, and an atomic between two plain accesses ends the first one's cover.
; CHECK-LABEL: define void @atomics(
; CHECK: call i64 @__ilgen_atomic_enter(ptr @x, i64 4,
; CHECK-NEXT: %a = load atomic i32, ptr @x acquire
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr @x, i64 4,
; CHECK-NEXT: call i64 @__ilgen_atomic_enter(ptr @x, i64 4,
; CHECK-NEXT: store atomic i32 %a, ptr @x release
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr @x, i64 4,
; CHECK-NEXT: call void @__ilgen_write(ptr @y, i64 8,
; CHECK-NEXT: store i64 1, ptr @y
; CHECK-NEXT: call i64 @__ilgen_atomic_enter(ptr @x, i64 4,
; CHECK-NEXT: atomicrmw add ptr @x
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr @x, i64 4,
; CHECK-NEXT: call void @__ilgen_write(ptr @y, i64 8,
; CHECK-NEXT: store i64 2, ptr @y
; CHECK-NEXT: fence seq_cst
; CHECK-NEXT: call void @__ilgen_write(ptr @y, i64 8,
; CHECK-NEXT: store i64 3, ptr @y
; CHECK-NEXT: ret void
define void @atomics() {
  %a = load atomic i32, ptr @x acquire, align 4
  store atomic i32 %a, ptr @x release, align 4
  store i64 1, ptr @y
  %o = atomicrmw add ptr @x, i32 1 seq_cst
  store i64 2, ptr @y
  fence seq_cst
  store i64 3, ptr @y
  ret void
}

; NOT when the earlier access is smaller, is a read before a write of another block, or touches
; another address: a 4-byte write does not cover an 8-byte read of the same pointer; a read
; covers no write, except as the load of a read-modify-write in its own block.
; CHECK-LABEL: define void @sizes_and_kinds(
; CHECK: call void @__ilgen_write(ptr %p, i64 4,
; CHECK-NEXT: store i32 0, ptr %p
; CHECK-NEXT: call void @__ilgen_read(ptr %p, i64 8,
; CHECK-NEXT: %wide = load i64, ptr %p
; CHECK-NEXT: call void @__ilgen_read(ptr %q, i64 4,
; CHECK-NEXT: %n = load i32, ptr %q
; CHECK-NEXT: call void @__ilgen_read(ptr %r, i64 4,
; CHECK-NEXT: %o = load i32, ptr %r
; CHECK-NEXT: br label %next
; CHECK: next:
; CHECK-NEXT: call void @__ilgen_write(ptr %q, i64 4,
; CHECK-NEXT: store i32 %n, ptr %q
; A narrower store after a wider load is no read-modify-write: the load has bytes it does not write.
; CHECK-NEXT: call void @__ilgen_read(ptr %s, i64 8,
; CHECK-NEXT: %big = load i64, ptr %s
; CHECK-NEXT: %t = trunc i64 %big to i32
; CHECK-NEXT: call void @__ilgen_write(ptr %s, i64 4,
; CHECK-NEXT: store i32 %t, ptr %s
; CHECK-NEXT: ret void
define void @sizes_and_kinds(ptr %p, ptr %q, ptr %r, ptr %s) {
  store i32 0, ptr %p
  %wide = load i64, ptr %p
  %n = load i32, ptr %q
  %o = load i32, ptr %r
  br label %next
next:
  store i32 %n, ptr %q
  %big = load i64, ptr %s
  %t = trunc i64 %big to i32
  store i32 %t, ptr %s
  ret void
}
