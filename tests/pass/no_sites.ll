; A module with nothing to instrument is left alone: no hooks, no site table.
; RUN: %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

; CHECK-NOT: __ilgen
; CHECK-NOT: ilgen_sites
; CHECK: define i32 @pure(
define i32 @pure(i32 %x) {
  %p = alloca i32
  store i32 %x, ptr %p
  %v = load i32, ptr %p
  ret i32 %v
}
