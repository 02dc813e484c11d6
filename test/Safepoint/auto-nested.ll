; polls=auto on nested loops. Back-edges are handled inner loops first, and
; a poll anywhere counts for every loop whose each iteration passes it. So:
;   - an inner loop that runs at least once per outer iteration (do-while)
;     and polls (its own poll, a frontend poll or a call) covers the outer
;     loop, which gets no poll of its own;
;   - an inner loop the outer iteration can skip (a while loop whose guard
;     fails) does not cover it: the outer back-edge gets a poll too.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -disable-output \
; RUN:   -pass-remarks=jitlock -pass-remarks-analysis=jitlock %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK

declare void @jitlock.safepoint.poll()

; Inner do-while, no poll anywhere: the inner back-edge gets one, and it
; covers the outer loop.
define void @do_while(ptr %p, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  store volatile i64 %j, ptr %p
  %j.next = add i64 %j, 1
  %inner.more = icmp ult i64 %j.next, %m
  br i1 %inner.more, label %inner, label %outer.latch
outer.latch:
  %i.next = add i64 %i, 1
  %outer.more = icmp ult i64 %i.next, %n
  br i1 %outer.more, label %outer, label %out
out:
  ret void
}

; CHECK-LABEL: define void @do_while(
; CHECK:       inner:
; CHECK:         %inner.more = icmp ult i64 %j.next, %m
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %inner.more, label %inner, label %outer.latch
; CHECK:       outer.latch:
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %outer.more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %outer.more, label %outer, label %out

; The same with the frontend's poll in the inner body: nothing is placed
; on either back-edge.
define void @do_while_explicit(ptr %p, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  call void @jitlock.safepoint.poll()
  store volatile i64 %j, ptr %p
  %j.next = add i64 %j, 1
  %inner.more = icmp ult i64 %j.next, %m
  br i1 %inner.more, label %inner, label %outer.latch
outer.latch:
  %i.next = add i64 %i, 1
  %outer.more = icmp ult i64 %i.next, %n
  br i1 %outer.more, label %outer, label %out
out:
  ret void
}

; CHECK-LABEL: define void @do_while_explicit(
; CHECK:       inner:
; CHECK-NEXT:    %j = phi
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    store volatile i64 %j, ptr %p
; CHECK-NEXT:    %j.next = add i64 %j, 1
; CHECK-NEXT:    %inner.more = icmp ult i64 %j.next, %m
; CHECK-NEXT:    br i1 %inner.more, label %inner, label %outer.latch
; CHECK:       outer.latch:
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %outer.more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %outer.more, label %outer, label %out

; A guarded inner loop with the frontend's poll: an outer iteration that
; skips it does not poll, so the outer back-edge gets a poll.
define void @while(ptr %p, i64 %n, i64 %m) {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  %any = icmp ne i64 %m, 0
  br i1 %any, label %inner, label %outer.latch
inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  call void @jitlock.safepoint.poll()
  store volatile i64 %j, ptr %p
  %j.next = add i64 %j, 1
  %inner.more = icmp ult i64 %j.next, %m
  br i1 %inner.more, label %inner, label %outer.latch
outer.latch:
  %i.next = add i64 %i, 1
  %outer.more = icmp ult i64 %i.next, %n
  br i1 %outer.more, label %outer, label %out
out:
  ret void
}

; CHECK-LABEL: define void @while(
; CHECK:       inner:
; CHECK-NEXT:    %j = phi
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    store volatile i64 %j, ptr %p
; CHECK-NEXT:    %j.next = add i64 %j, 1
; CHECK-NEXT:    %inner.more = icmp ult i64 %j.next, %m
; CHECK-NEXT:    br i1 %inner.more, label %inner, label %outer.latch
; CHECK:       outer.latch:
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %outer.more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %outer.more, label %outer, label %out

; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'do_while' on the loop back-edge from %inner to %inner
; REMARK-DAG: remark: {{.*}}no poll placed in 'do_while' on the loop back-edge from %outer.latch to %outer: every iteration polls already (the poll placed in %inner)
; REMARK-DAG: remark: {{.*}}no poll placed in 'do_while_explicit' on the loop back-edge from %inner to %inner: every iteration polls already (a safepoint poll in %inner)
; REMARK-DAG: remark: {{.*}}no poll placed in 'do_while_explicit' on the loop back-edge from %outer.latch to %outer: every iteration polls already (a safepoint poll in %inner)
; REMARK-DAG: remark: {{.*}}no poll placed in 'while' on the loop back-edge from %inner to %inner: every iteration polls already (a safepoint poll in %inner)
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'while' on the loop back-edge from %outer.latch to %outer
