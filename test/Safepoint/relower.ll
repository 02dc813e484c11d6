; Lowering the output again adds no poll: lowered polls are no
; jitlock.safepoint.poll() calls any more, and polls=auto marks the functions
; it placed polls in ("jitlock-polls-placed") and leaves them alone after.
; Two lowerings in one pipeline are the same as one; so is a second one
; through the default pipeline, as a JIT does with pre-lowered code (here
; polls=auto comes from the module flag, which the output keeps).
;
; (Input from stdin, so that every ModuleID is the same.)
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -S < %s -o %t.once.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S < %t.once.ll -o %t.twice.ll
; RUN: diff %t.once.ll %t.twice.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>,jitlock-lower<polls=auto>' -S < %s -o %t.pipeline.ll
; RUN: diff %t.once.ll %t.pipeline.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -S < %t.once.ll | FileCheck %s --check-prefix=O2
; RUN: FileCheck %s < %t.twice.ll

declare void @jitlock.safepoint.poll()

define void @f(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  store volatile i64 %i, ptr %p
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"auto"}

; One poll on the back-edge, one at the return.
; CHECK-LABEL: define void @f(
; CHECK-COUNT-2: call void @jitlock_rt_safepoint_poll(
; CHECK-NOT:     call void @jitlock_rt_safepoint_poll(
; CHECK:       !"jitlock.lowered-layout"
; CHECK-NOT:   !"jitlock.lowered-layout"

; O2-LABEL:      define void @f(
; O2-COUNT-2:      call void @jitlock_rt_safepoint_poll(
; O2-NOT:          call void @jitlock_rt_safepoint_poll(
