; The C library's math functions that LLVM's `inferattrs` leaves without attributes (`erfc`,
; `llrint`...) cannot synchronize: a function calling only them gets no call markers, and an access
; after such a call is covered by the same one before it. Not when the call is `nobuiltin`
; (-fno-builtin: the name may be the program's own), nor for a definition of that name in the
; module.
; RUN: env ILGEN_PASS_OPTIONS="stacks=0;cover=0" %opt -load-pass-plugin=%plugin -passes=ilgen-wait-loops,ilgen -S %s | FileCheck %s

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@x = global double 0.0
@m = global [40 x i8] zeroinitializer

declare double @erfc(double)
declare i64 @llrintf(float)
declare i32 @pthread_mutex_lock(ptr)

; The second read of @x needs no hook; no markers.
; CHECK-LABEL: define double @force(
; CHECK-NOT: @__ilgen_call_enter
; CHECK: call void @__ilgen_read(ptr @x, i64 8,
; CHECK-NEXT: %a = load double, ptr @x
; CHECK-NOT: call void @__ilgen_
; CHECK: ret double
define double @force(double %r, float %s) {
  %a = load double, ptr @x
  %e = call double @erfc(double %r)
  %l = call i64 @llrintf(float %s)
  %b = load double, ptr @x
  %t = fadd double %a, %b
  %u = fadd double %t, %e
  ret double %u
}

; `nobuiltin` on the call: markers, and the second read is hooked again.
; CHECK-LABEL: define double @force_nobuiltin(
; CHECK: call i32 @__ilgen_call_enter(
; CHECK: call void @__ilgen_read(ptr @x, i64 8,
; CHECK-NEXT: %a = load double, ptr @x
; CHECK: call void @__ilgen_read(ptr @x, i64 8,
; CHECK-NEXT: %b = load double, ptr @x
; CHECK: call void @__ilgen_call_leave(
define double @force_nobuiltin(double %r) {
  %a = load double, ptr @x
  %e = call double @erfc(double %r) nobuiltin
  %b = load double, ptr @x
  %t = fadd double %a, %b
  ret double %t
}

; The module's own `hypot`, which locks: markers on it and its caller, and the read after the call
; is hooked again.
; CHECK-LABEL: define double @hypot(
; CHECK: call i32 @__ilgen_call_enter(
; CHECK-LABEL: define double @force_own(
; CHECK: call i32 @__ilgen_call_enter(
; CHECK: call void @__ilgen_read(ptr @x, i64 8,
; CHECK-NEXT: %a = load double, ptr @x
; CHECK: call void @__ilgen_read(ptr @x, i64 8,
; CHECK-NEXT: %b = load double, ptr @x
define double @hypot(double %a, double %b) {
  %r = call i32 @pthread_mutex_lock(ptr @m)
  ret double %a
}

define double @force_own(double %r) {
  %a = load double, ptr @x
  %e = call double @hypot(double %r, double %r)
  %b = load double, ptr @x
  %t = fadd double %a, %b
  ret double %t
}
