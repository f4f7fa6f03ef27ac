; The coverage check inlined before plain loads and stores (instrument.rs `guard`): the hook is
; called only when the thread has no coverage table or the table does not hold the access; never
; around atomic, volatile or wider-than-a-granule accesses nor memory intrinsics; not at all with
; `cover=0`, nor in code that may go into a shared library (PIC without PIE).
; RUN: env ILGEN_PASS_OPTIONS=stacks=0 %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s
; RUN: sed 's/^;PIE //' %s | env ILGEN_PASS_OPTIONS=stacks=0 %opt -load-pass-plugin=%plugin -passes=ilgen -S | FileCheck %s
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s --check-prefix=OFF
; RUN: sed 's/^;PIC //' %s | env ILGEN_PASS_OPTIONS=stacks=0 %opt -load-pass-plugin=%plugin -passes=ilgen -S | FileCheck %s --check-prefix=OFF

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@shared = global i32 0
@counter = global i64 0
@wide = global <16 x i32> zeroinitializer

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; CHECK: @__ilgen_cover = external thread_local(initialexec) global ptr
; CHECK: @__ilgen_rcover = external thread_local(initialexec) global ptr
; OFF-NOT: @__ilgen_cover

; A read of 4 bytes: the thread's table, then its entry for the address's 32-byte granule; held
; when the tag matches, the access stays in its granule, and its bytes were read or written.
; Where the thread has no recording table, replay's (`__ilgen_rcover`) is checked: its tag and
; its entry take the hook's site pointer as well.
; CHECK-LABEL: define i32 @read(
; CHECK: [[ADDR:%[0-9]+]] = call ptr @llvm.threadlocal.address.p0(ptr @__ilgen_cover)
; CHECK-NEXT: [[TABLE:%ilgen.cover[0-9]*]] = load ptr, ptr [[ADDR]], align 8
; CHECK-NEXT: [[NONE:%[0-9]+]] = icmp eq ptr [[TABLE]], null
; CHECK-NEXT: br i1 [[NONE]], label %[[OTHER:ilgen.other[0-9]*]], label %[[PROBE:ilgen.probe[0-9]*]], !prof
; CHECK: [[PROBE]]:
; CHECK-NEXT: [[LOW:%[0-9]+]] = and i64 ptrtoint (ptr @shared to i64), 31
; CHECK: load atomic i64, ptr [[TABLE]] monotonic, align 8
; CHECK: [[KINDS:%ilgen.kinds[0-9]*]] = load i64, ptr
; CHECK-NEXT: [[WRITTEN:%[0-9]+]] = lshr i64 [[KINDS]], 32
; CHECK-NEXT: [[HAVE:%[0-9]+]] = or i64 [[WRITTEN]], [[KINDS]]
; CHECK-NEXT: [[BITS:%[0-9]+]] = shl i64 15, [[LOW]]
; CHECK-NEXT: and i64 [[HAVE]], [[BITS]]
; CHECK: icmp ule i64 [[LOW]], 28
; CHECK: br i1 %ilgen.held{{[0-9]*}}, label %[[HELD:ilgen.covered[0-9]*]], label %[[MISS:ilgen.record[0-9]*]]
; CHECK: [[OTHER]]:
; CHECK-NEXT: [[RADDR:%[0-9]+]] = call ptr @llvm.threadlocal.address.p0(ptr @__ilgen_rcover)
; CHECK-NEXT: [[RTABLE:%ilgen.rcover[0-9]*]] = load ptr, ptr [[RADDR]], align 8
; CHECK-NEXT: [[RNONE:%[0-9]+]] = icmp eq ptr [[RTABLE]], null
; CHECK-NEXT: br i1 [[RNONE]], label %[[MISS]], label %[[REPLAY:ilgen.replay[0-9]*]]
; CHECK: [[REPLAY]]:
; CHECK-NEXT: [[SHIFTED:%[0-9]+]] = shl i64 ptrtoint (ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[SITE:[0-9]+]]) to i64), 20
; CHECK-NEXT: [[SITEBITS:%[0-9]+]] = and i64 [[SHIFTED]], 17592169267200
; CHECK-NEXT: [[UNIT:%[0-9]+]] = lshr i64 [[SITEBITS]], 24
; CHECK-NEXT: [[SPREAD:%[0-9]+]] = mul i64 [[UNIT]], 2654435761
; CHECK: [[GRANULE:%[0-9]+]] = lshr i64 ptrtoint (ptr @shared to i64), 5
; CHECK-NEXT: [[EPOCH:%ilgen.epoch[0-9]*]] = load atomic i64, ptr [[RTABLE]] monotonic, align 8
; CHECK-NEXT: [[HIGH:%[0-9]+]] = lshr i64 [[GRANULE]], 18
; CHECK-NEXT: [[PART:%[0-9]+]] = or i64 [[EPOCH]], [[HIGH]]
; CHECK-NEXT: [[KEY:%ilgen.key[0-9]*]] = or i64 [[PART]], [[SITEBITS]]
; CHECK-NEXT: [[MIXED:%[0-9]+]] = xor i64 [[GRANULE]], [[SPREAD]]
; CHECK-NEXT: and i64 [[MIXED]], 262143
; CHECK: [[RTAG:%ilgen.tag[0-9]*]] = load i64, ptr
; CHECK: icmp eq i64 [[RTAG]], [[KEY]]
; CHECK: br i1 %ilgen.held{{[0-9]*}}, label %[[HELD]], label %[[MISS]]
; CHECK: [[MISS]]:
; CHECK-NEXT: call void @__ilgen_read(ptr @shared, i64 4, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[SITE]]))
; CHECK-NEXT: br label %[[HELD]]
; CHECK: [[HELD]]:
; CHECK-NEXT: load i32, ptr @shared
; OFF-LABEL: define i32 @read(
; OFF-NEXT: call void @__ilgen_read(ptr @shared, i64 4,
; OFF-NEXT: load i32, ptr @shared
define i32 @read() {
  %v = load i32, ptr @shared
  ret i32 %v
}

; A write of 8 bytes is held by written bytes only.
; CHECK-LABEL: define void @write(
; CHECK: [[KINDS:%ilgen.kinds[0-9]*]] = load i64, ptr
; CHECK-NEXT: [[WRITTEN:%[0-9]+]] = lshr i64 [[KINDS]], 32
; CHECK-NEXT: [[BITS:%[0-9]+]] = shl i64 255, %{{[0-9]+}}
; CHECK-NEXT: and i64 [[WRITTEN]], [[BITS]]
; CHECK: icmp ule i64 %{{[0-9]+}}, 24
; CHECK: call void @__ilgen_write(ptr %p, i64 8,
; CHECK-NEXT: br label %[[HELD:ilgen.covered[0-9]*]]
; CHECK: [[HELD]]:
; CHECK-NEXT: store i64 1, ptr %p
define void @write(ptr %p) {
  store i64 1, ptr %p
  ret void
}

; A read-modify-write's one hook, which the runtime records as its write: checked as a write;
; replay's check takes its write's site (the hook's fourth argument).
; CHECK-LABEL: define void @increment(
; CHECK: [[KINDS:%ilgen.kinds[0-9]*]] = load i64, ptr
; CHECK-NEXT: lshr i64 [[KINDS]], 32
; CHECK-NEXT: shl i64 255,
; CHECK: shl i64 ptrtoint (ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[WSITE:[0-9]+]]) to i64), 20
; CHECK: call void @__ilgen_read_write(ptr @counter, i64 8, ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 {{[0-9]+}}), ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[WSITE]]))
; CHECK-NEXT: br label %[[HELD:ilgen.covered[0-9]*]]
; CHECK: [[HELD]]:
; CHECK-NEXT: load i64, ptr @counter
define void @increment() {
  %v = load i64, ptr @counter
  %w = add i64 %v, 1
  store i64 %w, ptr @counter
  ret void
}

; Never checked inline: atomic and volatile accesses, one wider than a granule, memory intrinsics.
; CHECK-LABEL: define void @always_called(
; CHECK-NEXT: call i64 @__ilgen_atomic_enter(ptr %p, i64 4,
; CHECK-NEXT: load atomic i32, ptr %p seq_cst
; CHECK-NEXT: call void @__ilgen_atomic_leave(ptr %p, i64 4, {{.*}}, i64 1, i64 %
; CHECK-NEXT: call void @__ilgen_write(ptr %p, i64 4,
; CHECK-NEXT: store volatile i32 0, ptr %p
; CHECK-NEXT: call void @__ilgen_read(ptr @wide, i64 64,
; CHECK-NEXT: load <16 x i32>, ptr @wide
; CHECK-NEXT: call void @__ilgen_read(ptr %q, i64 16,
; CHECK-NEXT: call void @__ilgen_write(ptr %p, i64 16,
; CHECK-NEXT: call void @llvm.memcpy
; CHECK-NEXT: ret void
define void @always_called(ptr %p, ptr %q) {
  %a = load atomic i32, ptr %p seq_cst, align 4
  store volatile i32 0, ptr %p
  %w = load <16 x i32>, ptr @wide
  call void @llvm.memcpy.p0.p0.i64(ptr %p, ptr %q, i64 16, i1 false)
  ret void
}

;PIC !llvm.module.flags = !{!0}
;PIC !0 = !{i32 8, !"PIC Level", i32 2}
;PIE !llvm.module.flags = !{!0, !1}
;PIE !0 = !{i32 8, !"PIC Level", i32 2}
;PIE !1 = !{i32 7, !"PIE Level", i32 2}
