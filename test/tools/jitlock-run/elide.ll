; --elide=false keeps jitlock-elide out of the O2 pipeline: the nested
; re-entry of @counter stays in the code, where by default it is elided
; (only the outer enter and exit are lowered, and the remark says why).
; Both builds run the example correctly.
;
; RUN: jitlock-run --emit=ll %s | FileCheck %s --check-prefix=ELIDED
; RUN: jitlock-run --elide=false --emit=ll %s \
; RUN:   | FileCheck %s --check-prefix=KEPT
; RUN: jitlock-run --remarks --emit=ll %s 2>&1 >/dev/null \
; RUN:   | FileCheck %s --check-prefix=REMARK
; RUN: jitlock-run --elide=false --remarks --emit=ll %s 2>&1 >/dev/null \
; RUN:   | FileCheck %s --check-prefix=NO-REMARK
; RUN: jitlock-run --threads 2 --iterations 1000 %s \
; RUN:   | FileCheck %s --check-prefix=RAN
; RUN: jitlock-run --elide=false --threads 2 --iterations 1000 %s \
; RUN:   | FileCheck %s --check-prefix=RAN
; RUN: jitlock-run --help | FileCheck %s --check-prefix=HELP

; ELIDED-LABEL: @jitlock_example_run(
; ELIDED-COUNT-1: call i32 @jitlock_rt_monitor_enter_slow(
; ELIDED-NOT:     call i32 @jitlock_rt_monitor_enter_slow(
; ELIDED:         {{^}}}

; KEPT-LABEL:   @jitlock_example_run(
; KEPT-COUNT-2: call i32 @jitlock_rt_monitor_enter_slow(
; KEPT-NOT:     call i32 @jitlock_rt_monitor_enter_slow(
; KEPT:         {{^}}}

; REMARK:       nested monitor enter of @counter in 'jitlock_example_run' elided
; NO-REMARK-NOT: elided

; RAN:          check:   0 (invariant holds)

; HELP:         --elide

%Object = type { i64, i64 }
@counter = global %Object { i64 1, i64 0 }
@jitlock_example_iterations = global i64 100

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %n = load i64, ptr @jitlock_example_iterations
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @jitlock.monitor.enter(ptr @counter)
  call void @jitlock.monitor.enter(ptr @counter)
  %field = getelementptr %Object, ptr @counter, i32 0, i32 1
  %v = load i64, ptr %field
  %v1 = add i64 %v, 1
  store i64 %v1, ptr %field
  call void @jitlock.monitor.exit(ptr @counter)
  call void @jitlock.monitor.exit(ptr @counter)
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %out, label %loop
out:
  ret i64 0
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %n = load i64, ptr @jitlock_example_iterations
  %want = mul i64 %n, %nthreads
  %field = getelementptr %Object, ptr @counter, i32 0, i32 1
  %v = load i64, ptr %field
  %ok = icmp eq i64 %v, %want
  %r = select i1 %ok, i64 0, i64 1
  ret i64 %r
}
