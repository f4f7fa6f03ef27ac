; Include/exclude patterns limit memory instrumentation (loads, stores and the libc memory and
; string wrappers); pthread calls are rewritten regardless.
; RUN: %opt -load-pass-plugin=%plugin -passes=ilgen -ilgen-exclude='fun:helper_*' -S %s | FileCheck %s --check-prefix=EXCL
; RUN: env ILGEN_PASS_OPTIONS='exclude=fun:helper_*' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s --check-prefix=EXCL
; RUN: %opt -load-pass-plugin=%plugin -passes=ilgen -ilgen-include='fun:helper_*' -S %s | FileCheck %s --check-prefix=INCL
; RUN: env ILGEN_PASS_OPTIONS='include=src:*options.ll' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s --check-prefix=ALL
; RUN: env ILGEN_PASS_OPTIONS='exclude=src:*options.ll' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s --check-prefix=NONE

@g = global i32 0
@m = global [40 x i8] zeroinitializer
declare i32 @pthread_mutex_lock(ptr)
declare i64 @strlen(ptr)

; EXCL-LABEL: define void @helper_a(
; EXCL-NOT: __ilgen_write
; EXCL: call i32 @__ilgen_wrap_pthread_mutex_lock(
; String functions record memory ranges: excluded like loads and stores.
; EXCL-NEXT: call i64 @strlen(
; EXCL-LABEL: define void @worker(
; EXCL: call void @__ilgen_write(ptr @g

; INCL-LABEL: define void @helper_a(
; INCL: call void @__ilgen_write(ptr @g
; INCL-LABEL: define void @worker(
; INCL-NOT: __ilgen_write
; INCL: ret void

; ALL-LABEL: define void @helper_a(
; ALL: call void @__ilgen_write(ptr @g
; ALL-LABEL: define void @worker(
; ALL: call void @__ilgen_write(ptr @g

; NONE-NOT: call void @__ilgen_write
; NONE: call i32 @__ilgen_wrap_pthread_mutex_lock(
; NONE-NOT: call void @__ilgen_write

define void @helper_a() {
  store i32 1, ptr @g
  call i32 @pthread_mutex_lock(ptr @m)
  call i64 @strlen(ptr @m)
  ret void
}

define void @worker() {
  store i32 2, ptr @g
  ret void
}
