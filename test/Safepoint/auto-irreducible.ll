; polls=auto on irreducible control flow: cycles with two entries, which are
; no natural loop (no block of the cycle dominates the others, so LoopInfo
; sees no loop). Back-edges come from a depth-first search of the CFG, and
; every cycle has one, so each cycle still gets a poll unless it passes one
; already.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -disable-output \
; RUN:   -pass-remarks=jitlock -pass-remarks-analysis=jitlock %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; LoopInfo indeed finds no loop in @two_entries.
; RUN: opt -passes='print<loops>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=LOOPS

declare void @work()

; a <-> b, entered at a or at b. The search from entry meets a first, so
; b -> a is the back-edge.
define void @two_entries(i1 %c, ptr %p) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = load volatile i1, ptr %p
  br i1 %x, label %b, label %out
b:
  %y = load volatile i1, ptr %p
  br i1 %y, label %a, label %out
out:
  ret void
}

; CHECK-LABEL: define void @two_entries(
; CHECK:       a:
; CHECK-NEXT:    %x = load volatile i1, ptr %p
; CHECK-NEXT:    br i1 %x, label %b, label %out
; CHECK:       b:
; CHECK-NEXT:    %y = load volatile i1, ptr %p
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %y, label %a, label %out

; The same cycle with a call in a: every way round passes it.
define void @two_entries_call(i1 %c, ptr %p) {
entry:
  br i1 %c, label %a, label %b
a:
  call void @work()
  %x = load volatile i1, ptr %p
  br i1 %x, label %b, label %out
b:
  %y = load volatile i1, ptr %p
  br i1 %y, label %a, label %out
out:
  ret void
}

; CHECK-LABEL: define void @two_entries_call(
; CHECK:       b:
; CHECK-NEXT:    %y = load volatile i1, ptr %p
; CHECK-NEXT:    br i1 %y, label %a, label %out

; Two overlapping cycles, a-b and b-c, entered at a and at c: the search
; finds b -> a and c -> b; each gets a poll.
define void @overlapping(i1 %c, ptr %p) {
entry:
  br i1 %c, label %a, label %cc
a:
  %x = load volatile i1, ptr %p
  br i1 %x, label %b, label %out
b:
  %y = load volatile i32, ptr %p
  switch i32 %y, label %out [ i32 0, label %a
                              i32 1, label %cc ]
cc:
  %z = load volatile i1, ptr %p
  br i1 %z, label %b, label %out
out:
  ret void
}

; CHECK-LABEL: define void @overlapping(
; CHECK:       a:
; CHECK-NEXT:    %x = load volatile i1, ptr %p
; CHECK-NEXT:    br i1 %x, label %b, label %out
; CHECK:       b:
; CHECK-NEXT:    %y = load volatile i32, ptr %p
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    switch i32 %y
; CHECK:       cc:
; CHECK-NEXT:    %z = load volatile i1, ptr %p
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br i1 %z, label %b, label %out

; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'two_entries' on the loop back-edge from %b to %a
; REMARK-DAG: remark: {{.*}}no poll placed in 'two_entries_call' on the loop back-edge from %b to %a: every iteration polls already (a call to @work in %a)
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'overlapping' on the loop back-edge from %cc to %b
; REMARK-DAG: remark: {{.*}}safepoint poll placed in 'overlapping' on the loop back-edge from %b to %a

; LOOPS-LABEL: Loop info for function 'two_entries':
; LOOPS-NOT:   Loop at depth
; LOOPS-LABEL: Loop info for function 'two_entries_call':
