; Exits in loops: the enter is outside the loop but the exit is inside, so
; the second iteration exits a monitor it no longer holds.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/inside.ll 2>&1 | FileCheck %s --check-prefix=INSIDE
; The enter is inside the loop but only on some iterations.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/conditional.ll 2>&1 | FileCheck %s --check-prefix=COND
; The loop enters once per iteration and the code after it exits twice: a
; single iteration leaves one hold.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/after.ll 2>&1 | FileCheck %s --check-prefix=AFTER

; INSIDE: error: jitlock: in function 'exit_in_loop': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %o)
; COND: error: jitlock: in function 'conditional_enter': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %o)
; AFTER: error: jitlock: in function 'two_exits': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %o), !second !0{{$}}

;--- inside.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @exit_in_loop(ptr %o, i32 %n) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

;--- conditional.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @conditional_enter(ptr %o, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %latch ]
  %odd = trunc i32 %i to i1
  br i1 %odd, label %lock, label %latch
lock:
  call void @jitlock.monitor.enter(ptr %o)
  br label %latch
latch:
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

;--- after.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @two_exits(ptr %o, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %o)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  call void @jitlock.monitor.exit(ptr %o), !first !0
  call void @jitlock.monitor.exit(ptr %o), !second !0
  ret void
}

!0 = !{}
