; An example (the jitlock-run convention) whose locks jitlock-elide removes
; at O2: each iteration allocates a temporary box, locks it (never escapes:
; elided), and adds its value to a shared counter under the counter's lock,
; taken twice (the inner one elided). The counter's outer lock stays, so the
; threads still contend.

%Box = type { i64, i64 }       ; header, value
%Counter = type { i64, i64 }   ; header, value

@counter = global %Counter { i64 1, i64 0 }
@boxes = global [64 x %Box] zeroinitializer
@jitlock_example_iterations = global i64 20000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; A fresh box: each thread reuses its own slot, whose previous box is dead.
define internal noalias ptr @new_box(i64 %tid) noinline {
  %box = getelementptr [64 x %Box], ptr @boxes, i64 0, i64 %tid
  store i64 1, ptr %box
  ret ptr %box
}

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %value.addr = getelementptr inbounds %Counter, ptr @counter, i32 0, i32 1
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %body, label %done

body:
  %box = call ptr @new_box(i64 %tid)
  call void @jitlock.monitor.enter(ptr %box)
  %box.value = getelementptr inbounds %Box, ptr %box, i32 0, i32 1
  store i64 %i, ptr %box.value
  call void @jitlock.monitor.enter(ptr @counter)
  call void @jitlock.monitor.enter(ptr @counter)
  %add = load i64, ptr %box.value
  %value = load i64, ptr %value.addr
  %value.next = add i64 %value, %add
  store i64 %value.next, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @counter)
  call void @jitlock.monitor.exit(ptr @counter)
  call void @jitlock.monitor.exit(ptr %box)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %i
}

; n * k * (k - 1) / 2: every thread adds 0 + 1 + ... + (k - 1).
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %k1 = sub i64 %k, 1
  %sum = mul i64 %k, %k1
  %half = udiv i64 %sum, 2
  %expected = mul i64 %half, %nthreads
  call void @jitlock.monitor.enter(ptr @counter)
  %value.addr = getelementptr inbounds %Counter, ptr @counter, i32 0, i32 1
  %value = load i64, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @counter)
  %ok = icmp eq i64 %value, %expected
  %status = select i1 %ok, i64 0, i64 1
  ret i64 %status
}
