; polls=none removes every poll the frontend wrote, calls and invokes alike,
; and places none: the code never stops at a safepoint, which is only for
; measuring what the polls cost. Each removal is a missed remark. Nothing is
; compiled in, so nothing is stamped.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=none>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=none>' -disable-output \
; RUN:   -pass-remarks-missed=jitlock %s 2>&1 | FileCheck %s --check-prefix=REMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -S %s | FileCheck %s --check-prefix=O2

declare void @jitlock.safepoint.poll()
declare i32 @__gxx_personality_v0(...)

define void @loop(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  store volatile i64 %i, ptr %p
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

define void @invoked() personality ptr @__gxx_personality_v0 {
entry:
  invoke void @jitlock.safepoint.poll() to label %ok unwind label %lp
ok:
  ret void
lp:
  %x = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %x
}

; CHECK-LABEL: define void @loop(
; CHECK:       loop:
; CHECK-NEXT:    %i = phi
; CHECK-NEXT:    store volatile i64 %i, ptr %p
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %out
; CHECK:       out:
; CHECK-NEXT:    ret void

; CHECK-LABEL: define void @invoked(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    br label %ok
; CHECK:       ok:
; CHECK-NEXT:    ret void

; CHECK-NOT:   poll
; CHECK-NOT:   jitlock.lowered-layout

; REMARK: remark: {{.*}}safepoint poll removed in 'loop': polls=none
; REMARK: remark: {{.*}}safepoint poll removed in 'invoked': polls=none

; Without polls=none the default pipeline keeps the loop's poll.
; O2-LABEL: define void @loop(
; O2:         call void @jitlock_rt_safepoint_poll(
