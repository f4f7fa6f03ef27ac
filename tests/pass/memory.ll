; Memory accesses: plain, vector, unaligned, atomic; and what must stay uninstrumented.
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@shared = global i32 0
@other = global i32 0
@table = constant [4 x i32] [i32 1, i32 2, i32 3, i32 4]
@wide = global <4 x float> zeroinitializer

declare void @escape(ptr)

; One blob holds the module's sites.
; CHECK: @__ilgen_sites = private constant [{{[0-9]+}} x i8] c"ILGS\04\00{{.*}}", section "ilgen_sites", align 16
; CHECK: @llvm.compiler.used = appending global [1 x ptr] [ptr @__ilgen_sites], section "llvm.metadata"

; CHECK-LABEL: define i32 @plain(
; CHECK: call void @__ilgen_read(ptr @shared, i64 4, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[R:[0-9]+]]))
; CHECK-NEXT: load i32, ptr @shared
; CHECK: call void @__ilgen_write(ptr @other, i64 4, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64
; CHECK-NEXT: store i32
define i32 @plain() {
  %v = load i32, ptr @shared
  %w = add i32 %v, 1
  store i32 %w, ptr @other
  ret i32 %v
}

; Sizes come from the DataLayout: a vector, an i128 at an odd address, an x86_fp80 (10 bytes).
; CHECK-LABEL: define void @sizes(
; CHECK: call void @__ilgen_read(ptr @wide, i64 16,
; CHECK: call void @__ilgen_write(ptr %odd, i64 16,
; CHECK-NEXT: store i128 0, ptr %odd, align 1
; CHECK: call void @__ilgen_write(ptr %p, i64 10,
define void @sizes(ptr %p) {
  %v = load <4 x float>, ptr @wide
  %odd = getelementptr i8, ptr %p, i64 3
  store i128 0, ptr %odd, align 1
  store x86_fp80 0xK00000000000000000000, ptr %p
  ret void
}

; A stack slot whose address stays in the function cannot be reached by another thread; one
; whose address is passed to a call can.
; CHECK-LABEL: define i32 @locals(
; CHECK-NOT: call void @__ilgen_{{.*}}(ptr %private
; CHECK: call void @__ilgen_write(ptr %escaping, i64 4,
; CHECK-NOT: call void @__ilgen_{{.*}}(ptr %private
; CHECK: ret i32
define i32 @locals(i32 %x) {
  %private = alloca i32
  %escaping = alloca i32
  store i32 %x, ptr %private
  store i32 %x, ptr %escaping
  call void @escape(ptr %escaping)
  %v = load i32, ptr %private
  ret i32 %v
}

; A constant global is never written, so reading it cannot race.
; CHECK-LABEL: define i32 @constant(
; CHECK-NOT: __ilgen_read
; CHECK: ret i32
define i32 @constant(i64 %i) {
  %p = getelementptr [4 x i32], ptr @table, i64 0, i64 %i
  %v = load i32, ptr %p
  ret i32 %v
}

; The runtime's own functions are never instrumented.
; CHECK-LABEL: define void @__ilgen_runtime_helper(
; CHECK-NOT: call void @__ilgen
; CHECK: ret void
define void @__ilgen_runtime_helper(ptr %p) {
  store i32 1, ptr %p
  ret void
}

; Relaxed atomics order nothing: the access hook alone. The others take the address's lock
; before (the token) and are recorded after, with their bits: 1 acquires, 2 released, 4 a
; read-modify-write, 8 writes; a cmpxchg's bits are those of its success order if it succeeded,
; else those of its failure order, which never releases (a lock's `acquire, monotonic` acquires
; when it took the lock, and only then).
; CHECK-LABEL: define i32 @atomics(
; CHECK: call void @__ilgen_atomic_read(ptr %p, i64 4,
; CHECK-NEXT: load atomic i32, ptr %p monotonic
; CHECK-NEXT: call void @__ilgen_atomic_write(ptr %p, i64 4,
; CHECK-NEXT: store atomic i32 2, ptr %p monotonic
; CHECK-NEXT: [[T1:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %p, i64 4, {{.*}}, i64 0)
; CHECK-NEXT: load atomic i32, ptr %p acquire
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %p, i64 4, {{.*}}, i64 1, i64 [[T1]])
; CHECK-NEXT: [[T2:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %p, i64 4, {{.*}}, i64 1)
; CHECK-NEXT: store atomic i32 1, ptr %p release
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %p, i64 4, {{.*}}, i64 10, i64 [[T2]])
; CHECK-NEXT: [[T3:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %p, i64 4, {{.*}}, i64 1)
; CHECK-NEXT: atomicrmw add ptr %p, i32 1 seq_cst
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %p, i64 4, {{.*}}, i64 15, i64 [[T3]])
; CHECK-NEXT: [[T4:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %q, i64 8, {{.*}}, i64 1)
; CHECK-NEXT: %c = cmpxchg ptr %q, i64 0, i64 1 seq_cst seq_cst
; CHECK-NEXT: [[OK:%[0-9]+]] = extractvalue { i64, i1 } %c, 1
; CHECK-NEXT: [[HOW:%[0-9]+]] = select i1 [[OK]], i64 15, i64 13
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %q, i64 8, {{.*}}, i64 [[HOW]], i64 [[T4]])
; CHECK-NEXT: [[T5:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %q, i64 8, {{.*}}, i64 1)
; CHECK-NEXT: %d = cmpxchg ptr %q, i64 1, i64 2 acq_rel monotonic
; CHECK-NEXT: [[OK2:%[0-9]+]] = extractvalue { i64, i1 } %d, 1
; CHECK-NEXT: [[HOW2:%[0-9]+]] = select i1 [[OK2]], i64 15, i64 12
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %q, i64 8, {{.*}}, i64 [[HOW2]], i64 [[T5]])
; CHECK-NEXT: [[T6:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %q, i64 8, {{.*}}, i64 1)
; CHECK-NEXT: %l = cmpxchg ptr %q, i64 0, i64 1 acquire monotonic
; CHECK-NEXT: [[OK3:%[0-9]+]] = extractvalue { i64, i1 } %l, 1
; CHECK-NEXT: [[HOW3:%[0-9]+]] = select i1 [[OK3]], i64 13, i64 12
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %q, i64 8, {{.*}}, i64 [[HOW3]], i64 [[T6]])
; CHECK-NEXT: [[T7:%[0-9]+]] = call i64 @__ilgen_atomic_enter(ptr %q, i64 8, {{.*}}, i64 1)
; CHECK-NEXT: %u = cmpxchg ptr %q, i64 1, i64 0 release monotonic
; CHECK-NEXT: [[OK4:%[0-9]+]] = extractvalue { i64, i1 } %u, 1
; CHECK-NEXT: [[HOW4:%[0-9]+]] = select i1 [[OK4]], i64 14, i64 12
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %q, i64 8, {{.*}}, i64 [[HOW4]], i64 [[T7]])
; CHECK-NEXT: call void @__ilgen_atomic_write(ptr %q, i64 8,
; CHECK-NEXT: %m = cmpxchg ptr %q, i64 1, i64 0 monotonic monotonic
; CHECK-NEXT: call void @__ilgen_atomic_write(ptr %q, i64 8,
; CHECK-NEXT: atomicrmw xchg ptr %q, i64 3 monotonic
define i32 @atomics(ptr %p, ptr %q) {
  %r = load atomic i32, ptr %p monotonic, align 4
  store atomic i32 2, ptr %p monotonic, align 4
  %a = load atomic i32, ptr %p acquire, align 4
  store atomic i32 1, ptr %p release, align 4
  %b = atomicrmw add ptr %p, i32 1 seq_cst
  %c = cmpxchg ptr %q, i64 0, i64 1 seq_cst seq_cst
  %d = cmpxchg ptr %q, i64 1, i64 2 acq_rel monotonic
  %l = cmpxchg ptr %q, i64 0, i64 1 acquire monotonic
  %u = cmpxchg ptr %q, i64 1, i64 0 release monotonic
  %m = cmpxchg ptr %q, i64 1, i64 0 monotonic monotonic
  %e = atomicrmw xchg ptr %q, i64 3 monotonic
  ret i32 %a
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memmove.p0.p0.i32(ptr, ptr, i32, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; Memory intrinsics are ranges: read the source, write the destination, length from the operand.
; CHECK-LABEL: define void @ranges(
; CHECK: call void @__ilgen_read(ptr %src, i64 %n,
; CHECK-NEXT: call void @__ilgen_write(ptr %dst, i64 %n,
; CHECK-NEXT: call void @llvm.memcpy
; CHECK: %[[W:.*]] = zext i32 %m to i64
; CHECK-NEXT: call void @__ilgen_read(ptr %src, i64 %[[W]],
; CHECK: call void @__ilgen_write(ptr %dst, i64
; CHECK-NEXT: call void @llvm.memmove
; CHECK: call void @__ilgen_write(ptr %dst, i64 32,
; CHECK-NEXT: call void @llvm.memset
; A private destination and a constant source are skipped like loads and stores.
; CHECK-NOT: call void @__ilgen
; CHECK: ret void
define void @ranges(ptr %dst, ptr %src, i64 %n, i32 %m) {
  %buf = alloca [16 x i8]
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %n, i1 false)
  call void @llvm.memmove.p0.p0.i32(ptr %dst, ptr %src, i32 %m, i1 false)
  call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 32, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %buf, ptr @table, i64 16, i1 false)
  ret void
}

