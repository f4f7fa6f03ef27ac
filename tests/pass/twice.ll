; Running the pass twice (the plugin named twice, or an LTO link of instrumented modules) must not
; instrument twice; the module carries !ilgen.instrumented.
; RUN: env 'ILGEN_PASS_OPTIONS=stacks=0;calls=0' %opt -load-pass-plugin=%plugin -passes=ilgen,ilgen -S %s | FileCheck %s

@g = global i32 0
declare i32 @pthread_mutex_lock(ptr)

; CHECK: @__ilgen_sites = private constant
; CHECK-NOT: @__ilgen_sites.
; CHECK-LABEL: define void @f(
; CHECK-NEXT: call void @__ilgen_write(ptr @g,
; CHECK-NEXT: store i32 1, ptr @g
; CHECK-NEXT: call i32 @__ilgen_wrap_pthread_mutex_lock(ptr @g,
; CHECK-NEXT: ret void
; CHECK: !ilgen.instrumented = !{!0}
define void @f() {
  store i32 1, ptr @g
  call i32 @pthread_mutex_lock(ptr @g)
  ret void
}
