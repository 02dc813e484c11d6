; polls=auto on loops (the rule is stated at the top of
; lib/Passes/LowerSafepoints.cpp): a loop whose every iteration passes a
; poll, or a call that may poll, gets no poll of its own (an analysis remark
; says which poll or call does it); any other loop gets one before the
; terminator of the block its back-edge leaves from (a remark says where).
; Calls to intrinsics and to the jitlock runtime do not count as polls.
; With no-inline each poll is one runtime call, which shows where it went.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -disable-output \
; RUN:   -pass-remarks=jitlock -pass-remarks-analysis=jitlock %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; The same polls inline.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %s | FileCheck %s --check-prefix=INLINE

declare void @jitlock.safepoint.poll()
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; No poll and no call: one poll on the back-edge.
define void @counted(ptr %p, i64 %n) {
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

; CHECK-LABEL: define void @counted(
; CHECK:       loop:
; CHECK:         %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %more, label %loop, label %out
; CHECK:       out:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret void

; INLINE-LABEL: define void @counted(
; INLINE:       loop:
; INLINE:         %more = icmp ult i64 %i.next, %n
; INLINE-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr %jitlock.thread, i64
; INLINE-NEXT:    %jitlock.poll.word = load volatile i8, ptr %jitlock.poll.addr
; INLINE:         br i1 %jitlock.poll.armed, label %jitlock.poll.slow, label %jitlock.poll.done
; INLINE:       jitlock.poll.done:
; INLINE-NEXT:    br i1 %more, label %loop, label %out

; The frontend's poll covers the loop.
define void @explicit(ptr %p, i64 %n) {
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

; CHECK-LABEL: define void @explicit(
; CHECK:       loop:
; CHECK:         store volatile i64 %i, ptr %p
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; A call that may poll covers it too: @work reaches its own polls.
define void @calls(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @work()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK-LABEL: define void @calls(
; CHECK:       loop:
; CHECK-NEXT:    %i = phi
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; So does an indirect call.
define void @indirect(ptr %fn, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void %fn()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK-LABEL: define void @indirect(
; CHECK:       loop:
; CHECK-NEXT:    %i = phi
; CHECK-NEXT:    call void %fn()
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; Intrinsics and the jitlock runtime (here a monitor's slow paths) do not
; poll: the loop gets its own.
define void @runtime(ptr %o, ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %o)
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 16, i1 false)
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK-LABEL: define void @runtime(
; CHECK:         call void @llvm.memset
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(
; CHECK:         %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; A call on one path through the body only: the other path does not poll,
; so the back-edge gets one.
define void @one_arm(i1 %c, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  br i1 %c, label %then, label %latch
then:
  call void @work()
  br label %latch
latch:
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK-LABEL: define void @one_arm(
; CHECK:       latch:
; CHECK:         %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; Two back-edges to one header (a `continue`): each one that can go round
; without polling gets a poll. A switch that names the header twice is one
; back-edge.
define void @two_latches(i1 %c, i32 %k, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %continue ], [ %i.next, %latch ], [ %i.next, %latch ]
  %i.next = add i64 %i, 1
  br i1 %c, label %continue, label %latch
continue:
  br label %loop
latch:
  switch i32 %k, label %out [ i32 0, label %loop
                              i32 1, label %loop ]
out:
  ret void
}

; CHECK-LABEL: define void @two_latches(
; CHECK:       continue:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br label %loop
; CHECK:       latch:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    switch i32 %k
; CHECK:       out:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'counted' on the loop back-edge from %loop to %loop
; REMARK-DAG: remark: {{.*}}no poll placed in 'explicit' on the loop back-edge from %loop to %loop: every iteration polls already (a safepoint poll in %loop)
; REMARK-DAG: remark: {{.*}}no poll placed in 'calls' on the loop back-edge from %loop to %loop: every iteration polls already (a call to @work in %loop)
; REMARK-DAG: remark: {{.*}}no poll placed in 'indirect' on the loop back-edge from %loop to %loop: every iteration polls already (an indirect call in %loop)
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'runtime' on the loop back-edge from %loop to %loop
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'one_arm' on the loop back-edge from %latch to %loop
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'two_latches' on the loop back-edge from %continue to %loop
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'two_latches' on the loop back-edge from %latch to %loop
; REMARK-NOT: back-edge
