; Coverage/profile counters are updated racily by design and are not the program's data.
; RUN: %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

@__llvm_gcov_ctr = internal global [2 x i64] zeroinitializer
@__profc_f = private global [1 x i64] zeroinitializer, section "__llvm_prf_cnts"
@g = global i32 0

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; CHECK-LABEL: define void @f(
; CHECK-NOT: call void @__ilgen_{{.*}}(ptr @__
; CHECK: call void @__ilgen_write(ptr @g,
; CHECK-NOT: call void @__ilgen_{{.*}}(ptr @__
; CHECK: ret void
define void @f() {
  %c = load i64, ptr @__llvm_gcov_ctr
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @__llvm_gcov_ctr
  %p = atomicrmw add ptr @__profc_f, i64 1 monotonic
  store i32 1, ptr @g
  call void @llvm.memset.p0.i64(ptr @__llvm_gcov_ctr, i8 0, i64 16, i1 false)
  ret void
}
