; polls=auto at returns: every ret gets a poll right before it, unless it
; comes right after a call that may poll (that callee polled at its own
; return; the call stays a tail call). A musttail call, which nothing may
; follow, gets the poll before it when it does not poll itself. A function
; without loops or calls still polls at each return: that is what lets a
; call to it count as a poll in its caller's loops.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -disable-output \
; RUN:   -pass-remarks=jitlock -pass-remarks-analysis=jitlock %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; With polls=explicit, nothing is placed.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s | FileCheck %s --check-prefix=EXPLICIT

declare i64 @work(i64)
declare void @jitlock.monitor.exit(ptr)
declare i64 @llvm.smax.i64(i64, i64)

define i64 @leaf(i64 %x) {
entry:
  %y = mul i64 %x, 3
  ret i64 %y
}

; CHECK-LABEL: define i64 @leaf(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    %y = mul i64 %x, 3
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret i64 %y

; Two returns, two polls.
define i64 @two_returns(i1 %c, i64 %x) {
entry:
  br i1 %c, label %a, label %b
a:
  ret i64 %x
b:
  ret i64 0
}

; CHECK-LABEL: define i64 @two_returns(
; CHECK:       a:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret i64 %x
; CHECK:       b:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret i64 0

; Right after a call that may poll: no poll, and the tail call stays one.
define i64 @tail(i64 %x) {
entry:
  %r = tail call i64 @work(i64 %x)
  ret i64 %r
}

; CHECK-LABEL: define i64 @tail(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %r = tail call i64 @work(i64 %x)
; CHECK-NEXT:    ret i64 %r

; Work after the call: a poll.
define i64 @after_call(i64 %x) {
entry:
  %r = call i64 @work(i64 %x)
  %s = add i64 %r, 1
  ret i64 %s
}

; CHECK-LABEL: define i64 @after_call(
; CHECK:         %s = add i64 %r, 1
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret i64 %s

; An intrinsic or a runtime call is no poll.
define i64 @after_intrinsic(i64 %x) {
entry:
  %m = call i64 @llvm.smax.i64(i64 %x, i64 0)
  ret i64 %m
}

; CHECK-LABEL: define i64 @after_intrinsic(
; CHECK:         %m = call i64 @llvm.smax.i64(i64 %x, i64 0)
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret i64 %m

define void @after_runtime(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @after_runtime(
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret void

; musttail: a call that polls needs nothing; one to a callee that is no
; poll (here the runtime's) gets the poll before it.
define i64 @musttail_polls(i64 %x) {
entry:
  %r = musttail call i64 @work(i64 %x)
  ret i64 %r
}

declare i64 @jitlock_rt_helper(i64)
define i64 @musttail_runtime(i64 %x) {
entry:
  %r = musttail call i64 @jitlock_rt_helper(i64 %x)
  ret i64 %r
}

; CHECK-LABEL: define i64 @musttail_polls(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %r = musttail call i64 @work(i64 %x)
; CHECK-NEXT:    ret i64 %r

; CHECK-LABEL: define i64 @musttail_runtime(
; CHECK:         call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    %r = musttail call i64 @jitlock_rt_helper(i64 %x)
; CHECK-NEXT:    ret i64 %r

; EXPLICIT-NOT: @jitlock_rt_safepoint_poll

; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'leaf' before the return in %entry
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'two_returns' before the return in %a
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'two_returns' before the return in %b
; REMARK-DAG: remark: {{.*}}no poll placed in 'tail' before the return in %entry: it follows a call to @work in %entry
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'after_call' before the return in %entry
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'after_intrinsic' before the return in %entry
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'after_runtime' before the return in %entry
; REMARK-DAG: remark: {{.*}}no poll placed in 'musttail_polls' before the return in %entry: it follows a call to @work in %entry
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'musttail_runtime' before the return in %entry
