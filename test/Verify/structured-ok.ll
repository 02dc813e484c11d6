; No false positives: structured locking in its usual shapes verifies and
; lowers without a diagnostic. Unstructured locking across functions (an
; exit-only or enter-only function) is not the verifier's business: the
; runtime handles it.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty
; Everything was lowered.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s --check-prefix=LOWERED

; CHECK-NOT: error

; LOWERED-NOT: @jitlock.monitor.

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare i32 @__gxx_personality_v0(...)

define void @nested(ptr %a, ptr %b) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @work()
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define void @recursive(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Recursion through a pointer cast of the same object.
define void @recursive_cast(ptr %a) {
entry:
  %b = addrspacecast ptr %a to ptr addrspace(1)
  %c = addrspacecast ptr addrspace(1) %b to ptr
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %c)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %c)
  ret void
}

define void @in_loop(ptr %a, i32 %n) {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %out
body:
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  %i.next = add i32 %i, 1
  br label %head
out:
  ret void
}

define void @around_loop(ptr %a, i32 %n) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @work()
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; A loop whose body releases and re-takes the lock (a wait-like shape).
define void @release_and_retake(ptr %a, i32 %n) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @work()
  call void @jitlock.monitor.enter(ptr %a)
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define void @both_branches(ptr %a, i1 %c) {
entry:
  br i1 %c, label %x, label %y
x:
  call void @jitlock.monitor.enter(ptr %a)
  br label %join
y:
  call void @work()
  call void @jitlock.monitor.enter(ptr %a)
  br label %join
join:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define i32 @early_returns(ptr %a, i32 %k) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  switch i32 %k, label %other [ i32 0, label %zero
                                i32 1, label %one ]
zero:
  call void @jitlock.monitor.exit(ptr %a)
  ret i32 0
one:
  call void @jitlock.monitor.exit(ptr %a)
  ret i32 1
other:
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  ret i32 2
}

; synchronized (a) { work(); } with the exception path releasing too.
define void @with_handler(ptr %a) personality ptr @__gxx_personality_v0 {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  invoke void @work() to label %ok unwind label %cleanup
ok:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
cleanup:
  %lp = landingpad { ptr, i32 } cleanup
  call void @jitlock.monitor.exit(ptr %a)
  resume { ptr, i32 } %lp
}

; Unstructured across functions: these two are a pair at run time.
define void @enter_only(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  ret void
}

define void @exit_only(ptr %a) {
entry:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Hand-over-hand: lock A; lock B; unlock A; unlock B.
define void @hand_over_hand(ptr %a, ptr %b) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  ret void
}

; An exit in unreachable code has no path from the entry.
define void @unreachable_exit(ptr %a) {
entry:
  ret void
dead:
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  br label %dead
}
