; Wait-loop markers: every edge into the header from outside gets __ilgen_wait_loop_enter, every
; edge out of the loop __ilgen_wait_loop_exit; critical edges are split for them.
; RUN: env 'ILGEN_PASS_OPTIONS=stacks=0;calls=0' %opt -load-pass-plugin=%plugin -passes=ilgen -S %s | FileCheck %s

@c = global [48 x i8] zeroinitializer
@m = global [40 x i8] zeroinitializer
@ready = global i32 0

declare i32 @pthread_cond_wait(ptr, ptr)

; Both edges into %header and the edge %header -> %done are critical.
; CHECK-LABEL: define void @critical(
; CHECK: entry:
; CHECK-NEXT: br i1 %f, label %[[E1:entry.header_crit_edge]], label %other
; CHECK: [[E1]]:
; CHECK-NEXT: call void @__ilgen_wait_loop_enter(ptr @c, ptr getelementptr inbounds (i8, ptr @__ilgen_sites
; CHECK-NEXT: br label %header
; CHECK: other:
; CHECK-NEXT: br i1 %g, label %[[E2:other.header_crit_edge]], label %done
; CHECK: [[E2]]:
; CHECK-NEXT: call void @__ilgen_wait_loop_enter(ptr @c,
; CHECK-NEXT: br label %header
; CHECK: header:
; CHECK: br i1 %z, label %[[X:header.done_crit_edge]], label %body
; CHECK: [[X]]:
; CHECK-NEXT: call void @__ilgen_wait_loop_exit(ptr @c,
; CHECK-NEXT: br label %done
; CHECK: body:
; CHECK-NEXT: call i32 @__ilgen_wrap_pthread_cond_wait(ptr @c, ptr @m, ptr
; CHECK: done:
; CHECK-NEXT: ret void
define void @critical(i1 %f, i1 %g) {
entry:
  br i1 %f, label %header, label %other
other:
  br i1 %g, label %header, label %done
header:
  %r = load i32, ptr @ready
  %z = icmp ne i32 %r, 0
  br i1 %z, label %done, label %body
body:
  %w = call i32 @pthread_cond_wait(ptr @c, ptr @m)
  br label %header
done:
  ret void
}

; Non-critical edges: enter before the preheader's branch, exit at the start of the single-entry
; exit block. The condition variable is computed inside the loop from a stack slot (as clang
; does at -O0), so its load and GEP are cloned at each marker; a PHI cannot be, so null.
; CHECK-LABEL: define void @simple(
; CHECK: %[[Q1:.*]] = load ptr, ptr %q.addr
; CHECK-NEXT: %[[C1:.*]] = getelementptr i8, ptr %[[Q1]], i64 8
; CHECK-NEXT: call void @__ilgen_wait_loop_enter(ptr %[[C1]],
; CHECK-NEXT: br label %header
; CHECK: exit:
; CHECK-NEXT: %[[Q2:.*]] = load ptr, ptr %q.addr
; CHECK-NEXT: %[[C2:.*]] = getelementptr i8, ptr %[[Q2]], i64 8
; CHECK-NEXT: call void @__ilgen_wait_loop_exit(ptr %[[C2]],
; CHECK-NEXT: ret void
define void @simple(ptr %q) {
entry:
  %q.addr = alloca ptr
  store ptr %q, ptr %q.addr
  br label %header
header:
  %r = load i32, ptr @ready
  %z = icmp ne i32 %r, 0
  br i1 %z, label %exit, label %body
body:
  %qq = load ptr, ptr %q.addr
  %cv = getelementptr i8, ptr %qq, i64 8
  %w = call i32 @pthread_cond_wait(ptr %cv, ptr @m)
  br label %header
exit:
  ret void
}

; CHECK-LABEL: define void @phi_cond(
; CHECK: call void @__ilgen_wait_loop_enter(ptr null,
; CHECK: call void @__ilgen_wait_loop_exit(ptr null,
define void @phi_cond(ptr %a, ptr %b) {
entry:
  br label %header
header:
  %cv = phi ptr [ %a, %entry ], [ %b, %body ]
  %r = load i32, ptr @ready
  %z = icmp ne i32 %r, 0
  br i1 %z, label %exit, label %body
body:
  %w = call i32 @pthread_cond_wait(ptr %cv, ptr @m)
  br label %header
exit:
  ret void
}

; Only the innermost loop around the wait is marked, not the worker loop enclosing it; the
; cloned instructions and markers are not instrumented.
; CHECK-LABEL: define void @nested(
; CHECK-COUNT-1: call void @__ilgen_wait_loop_enter(
; CHECK-NOT: call void @__ilgen_wait_loop_enter(
; CHECK: ret void
define void @nested(i1 %more) {
entry:
  br label %outer
outer:
  br label %header
header:
  %r = load i32, ptr @ready
  %z = icmp ne i32 %r, 0
  br i1 %z, label %latch, label %body
body:
  %w = call i32 @pthread_cond_wait(ptr @c, ptr @m)
  br label %header
latch:
  br i1 %more, label %outer, label %exit
exit:
  ret void
}
