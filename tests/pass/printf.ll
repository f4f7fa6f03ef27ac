; The sprintf family stays as it is and is followed by __ilgen_printf_written(buf, max, ret,
; site): the length argument of the bounded forms, UINT64_MAX (-1) for the others, the result
; sign-extended, and the call's own site. Excluded functions get no hook (memory is not
; instrumented there).
; RUN: env ILGEN_PASS_OPTIONS=stacks=0 %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s
; RUN: env ILGEN_PASS_OPTIONS=stacks=0 %opt -load-pass-plugin=%plugin -passes=ilgen -ilgen-exclude=fun:excluded -S %s \
; RUN:   | FileCheck %s --check-prefix=EXCLUDED

target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@buf = global [64 x i8] zeroinitializer
@fmt = private constant [3 x i8] c"%d\00"

declare i32 @snprintf(ptr, i64, ptr, ...)
declare i32 @sprintf(ptr, ptr, ...)
declare i32 @vsnprintf(ptr, i64, ptr, ptr)
declare i32 @__snprintf_chk(ptr, i64, i32, i64, ptr, ...)
declare i32 @__sprintf_chk(ptr, i32, i64, ptr, ...)

; CHECK-LABEL: define i32 @format(
; CHECK:      %a = call i32 (ptr, i64, ptr, ...) @snprintf(ptr @buf, i64 %n, ptr @fmt, i32 %x)
; CHECK-NEXT: [[A:%.*]] = sext i32 %a to i64
; CHECK-NEXT: call void @__ilgen_printf_written(ptr @buf, i64 %n, i64 [[A]], ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 [[S1:[0-9]+]]))
; CHECK-NEXT: %b = call i32 (ptr, ptr, ...) @sprintf(ptr %p, ptr @fmt, i32 %x)
; CHECK-NEXT: [[B:%.*]] = sext i32 %b to i64
; CHECK-NEXT: call void @__ilgen_printf_written(ptr %p, i64 -1, i64 [[B]], ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64
; CHECK-NEXT: %c = call i32 @vsnprintf(ptr %p, i64 16, ptr @fmt, ptr %ap)
; CHECK-NEXT: [[C:%.*]] = sext i32 %c to i64
; CHECK-NEXT: call void @__ilgen_printf_written(ptr %p, i64 16, i64 [[C]], ptr
; The _FORTIFY_SOURCE forms: the buffer is first, snprintf's bound second, the object size is
; only a check.
; CHECK-NEXT: %d = call i32 (ptr, i64, i32, i64, ptr, ...) @__snprintf_chk(ptr @buf, i64 32, i32 1, i64 64, ptr @fmt, i32 %x)
; CHECK-NEXT: [[D:%.*]] = sext i32 %d to i64
; CHECK-NEXT: call void @__ilgen_printf_written(ptr @buf, i64 32, i64 [[D]], ptr
; CHECK-NEXT: %e = call i32 (ptr, i32, i64, ptr, ...) @__sprintf_chk(ptr @buf, i32 1, i64 64, ptr @fmt, i32 %x)
; CHECK-NEXT: [[E:%.*]] = sext i32 %e to i64
; CHECK-NEXT: call void @__ilgen_printf_written(ptr @buf, i64 -1, i64 [[E]], ptr
; CHECK-NEXT: ret i32 %a
define i32 @format(ptr %p, i64 %n, i32 %x, ptr %ap) {
  %a = call i32 (ptr, i64, ptr, ...) @snprintf(ptr @buf, i64 %n, ptr @fmt, i32 %x)
  %b = call i32 (ptr, ptr, ...) @sprintf(ptr %p, ptr @fmt, i32 %x)
  %c = call i32 @vsnprintf(ptr %p, i64 16, ptr @fmt, ptr %ap)
  %d = call i32 (ptr, i64, i32, i64, ptr, ...) @__snprintf_chk(ptr @buf, i64 32, i32 1, i64 64, ptr @fmt, i32 %x)
  %e = call i32 (ptr, i32, i64, ptr, ...) @__sprintf_chk(ptr @buf, i32 1, i64 64, ptr @fmt, i32 %x)
  ret i32 %a
}

; CHECK-LABEL: define i32 @excluded(
; CHECK:       call i32 (ptr, ptr, ...) @sprintf(
; CHECK-NEXT:  sext
; CHECK-NEXT:  call void @__ilgen_printf_written(
; EXCLUDED-LABEL: define i32 @excluded(
; EXCLUDED:       call i32 (ptr, ptr, ...) @sprintf(ptr @buf, ptr @fmt, i32 %x)
; EXCLUDED-NEXT:  ret i32
define i32 @excluded(i32 %x) {
  %r = call i32 (ptr, ptr, ...) @sprintf(ptr @buf, ptr @fmt, i32 %x)
  ret i32 %r
}

; CHECK: declare void @__ilgen_printf_written(ptr, i64, i64, ptr)
