; The shadow-stack hooks of replay's reports: the flag loaded once on entry, each hook behind an
; unlikely branch on it; enter on entry with the function's return address (its depth kept for the
; landing pad), the call's site before each call of program code (none before the runtime's
; wrappers, intrinsics), exit before each return, unwound after each landing pad. A function
; that calls nothing gets none, and one with a musttail call none (no code may come between the
; call and its return).
; RUN: env ILGEN_PASS_OPTIONS=calls=0 %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s
; RUN: env 'ILGEN_PASS_OPTIONS=stacks=0;calls=0' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s \
; RUN:   | FileCheck %s --check-prefix=OFF

@x = global i32 0
declare void @g()
declare i32 @__gxx_personality_v0(...)
declare i32 @pthread_mutex_lock(ptr)
declare void @llvm.donothing()

define void @f(ptr %m) personality ptr @__gxx_personality_v0 {
entry:
  %slot = alloca i32
  store i32 1, ptr @x
  call void @g()
  %r = call i32 @pthread_mutex_lock(ptr %m)
  call void @llvm.donothing()
  invoke void @g() to label %ok unwind label %lp
ok:
  ret void
lp:
  %l = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %l
}

define i32 @leaf(i32 %a) {
  ret i32 %a
}

define void @tail() {
  musttail call void @g()
  ret void
}

; CHECK: @__ilgen_stacks = external global i8
; CHECK-LABEL: define void @f(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %ilgen.depth = alloca i32
; CHECK-NEXT:    %slot = alloca i32
; CHECK-NEXT:    %ilgen.stacks = load i8, ptr @__ilgen_stacks
; CHECK-NEXT:    %ilgen.on = icmp ne i8 %ilgen.stacks, 0
; CHECK-NEXT:    br i1 %ilgen.on, label %[[ENTER:[0-9]+]], label %{{[0-9]+}}, !prof ![[UNLIKELY:[0-9]+]]
; CHECK:       [[ENTER]]:
; CHECK-NEXT:    %[[RET:[0-9]+]] = call ptr @llvm.returnaddress(i32 0)
; CHECK-NEXT:    %[[D:[0-9]+]] = call i32 @__ilgen_func_enter(ptr %[[RET]])
; CHECK-NEXT:    store i32 %[[D]], ptr %ilgen.depth
; CHECK:         call void @__ilgen_write(ptr @x,
; CHECK:         br i1 %ilgen.on,
; CHECK:         call void @__ilgen_func_call(ptr getelementptr inbounds (i8, ptr @__ilgen_sites, i64 {{[0-9]+}}))
; CHECK:         call void @g()
; CHECK-NEXT:    call i32 @__ilgen_wrap_pthread_mutex_lock(
; CHECK-NEXT:    call void @llvm.donothing()
; CHECK-NEXT:    br i1 %ilgen.on,
; CHECK:         call void @__ilgen_func_call(
; CHECK:         invoke void @g()
; CHECK:       ok:
; CHECK-NEXT:    br i1 %ilgen.on,
; CHECK:         call void @__ilgen_func_exit()
; CHECK:         ret void
; CHECK:       lp:
; CHECK-NEXT:    landingpad
; CHECK-NEXT:    cleanup
; CHECK-NEXT:    br i1 %ilgen.on,
; CHECK:         %[[L:[0-9]+]] = load i32, ptr %ilgen.depth
; CHECK-NEXT:    call void @__ilgen_func_unwound(i32 %[[L]])
; CHECK:         resume
; CHECK-LABEL: define i32 @leaf(
; CHECK-NEXT:    ret i32 %a
; CHECK-LABEL: define void @tail(
; CHECK-NEXT:    musttail call void @g()
; CHECK-NEXT:    ret void
; CHECK: ![[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048576}

; OFF-NOT: __ilgen_stacks
; OFF-NOT: __ilgen_func_
