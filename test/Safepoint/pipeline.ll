; jitlock-lower runs jitlock-lower-safepoints after jitlock-lower-monitors
; (whose runtime calls are then known not to poll) and before
; jitlock-lower-thread; running the passes one by one gives the same module.
; The default O1-O3 pipelines lower the polls too (at their start, with the
; monitors), and keep the poll inside the loop.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-verify,jitlock-lower-monitors<polls=auto>,jitlock-place-polls<polls=auto>,jitlock-lower-safepoints<polls=auto>,jitlock-lower-thread<polls=auto>' \
; RUN:   -S < %s > %t.split.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S < %s > %t.whole.ll
; RUN: diff %t.split.ll %t.whole.ll
; RUN: FileCheck %s --check-prefix=AUTO < %t.whole.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O1>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O3>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O

declare void @jitlock.safepoint.poll()
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; synchronized (o) { ++*c; } poll; for n iterations.
define void @f(ptr %o, ptr %c, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i64, ptr %c
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; The frontend's poll covers the loop; the monitors' runtime calls are no
; polls, so the return gets one.
; AUTO-LABEL:    define void @f(
; AUTO-COUNT-2:    call void @jitlock_rt_safepoint_poll(
; AUTO-NOT:        call void @jitlock_rt_safepoint_poll(

; O-LABEL:     define void @f(
; O:           loop:
; O:             load volatile i8, ptr %jitlock.poll.addr
; O:             call void @jitlock_rt_safepoint_poll(
; O:             br i1 %more, label %loop, label
