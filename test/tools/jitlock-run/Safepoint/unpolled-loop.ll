; Polls in run()'s loop only (as lowered with polls=explicit): check() calls
; @count_down, whose loop never polls. jitlock-run --safepoint-every
; --polls=explicit runs it (run() reaches its polls) and warns about
; @count_down, and about nothing else.
;
; RUN: jitlock-run --threads 4 --safepoint-every=200 --polls=explicit %s \
; RUN:     2>%t.err | FileCheck %s
; RUN: FileCheck %s --check-prefix=WARN < %t.err
; CHECK:      polls=explicit (1 in the code)
; CHECK:      check:   0 (invariant holds)
; CHECK-NEXT: elapsed:
; CHECK-NEXT: safepoints: {{[1-9][0-9]*}}  ttsp median
; WARN:       {{^}}jitlock-run: warning: function 'count_down' has a loop that never polls{{.*}}
; WARN-NOT:   {{.}}
%Object = type { i64, i64 }
@obj = global %Object { i64 1, i64 0 }
@jitlock_example_iterations = global i64 20000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr @obj)
  %value.addr = getelementptr inbounds %Object, ptr @obj, i32 0, i32 1
  %value = load i64, ptr %value.addr
  %value.next = add i64 %value, 1
  store i64 %value.next, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @obj)
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp slt i64 %i.next, %k
  br i1 %more, label %loop, label %done

done:
  ret i64 %k
}

; Counts the value down to 0 with volatile accesses, so that the loop stays
; a loop; returns the steps taken.
define internal i64 @count_down(ptr %addr) noinline {
entry:
  br label %loop

loop:
  %steps = phi i64 [ 0, %entry ], [ %steps.next, %body ]
  %value = load volatile i64, ptr %addr
  %zero = icmp eq i64 %value, 0
  br i1 %zero, label %done, label %body

body:
  %value.next = sub i64 %value, 1
  store volatile i64 %value.next, ptr %addr
  %steps.next = add i64 %steps, 1
  br label %loop

done:
  ret i64 %steps
}

; 0 iff the value was nthreads * K.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %expected = mul i64 %nthreads, %k
  %value.addr = getelementptr inbounds %Object, ptr @obj, i32 0, i32 1
  %steps = call i64 @count_down(ptr %value.addr)
  %ok = icmp eq i64 %steps, %expected
  %status = select i1 %ok, i64 0, i64 1
  ret i64 %status
}
