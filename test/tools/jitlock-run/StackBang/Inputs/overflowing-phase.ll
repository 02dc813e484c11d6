; overflowing-phase.ll - an example whose setup or check recurses without
; end, holding a lock, so that the thread that runs them overflows its stack.
;
; @jitlock_example_iterations (jitlock-run --iterations) picks the phase:
; 0, nothing overflows and the check passes; 1, setup overflows; 2, check
; overflows. Each run() thread increments @lock's count once under the lock;
; the check passes iff the count is the thread count.

%Object = type { i64, i64 }   ; header (1 = unlocked), count

@lock = global %Object { i64 1, i64 0 }
@jitlock_example_iterations = global i64 0

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; Keeps each level's frame alive: a store into it that cannot be dropped.
define void @touch(ptr %frame, i64 %level) noinline {
entry:
  %i = urem i64 %level, 64
  %slot = getelementptr inbounds [64 x i64], ptr %frame, i64 0, i64 %i
  store volatile i64 %level, ptr %slot
  ret void
}

; Recurses until the stack runs out, the outermost level holding @lock. The
; touch after the call keeps it from becoming a loop.
define void @descend(i64 %level) "jitlock-stack-bang" {
entry:
  %frame = alloca [64 x i64]
  call void @touch(ptr %frame, i64 %level)
  %next = add i64 %level, 1
  %outermost = icmp eq i64 %level, 0
  br i1 %outermost, label %locked, label %plain

locked:
  call void @jitlock.monitor.enter(ptr @lock)
  call void @descend(i64 %next)
  call void @touch(ptr %frame, i64 %level)
  call void @jitlock.monitor.exit(ptr @lock)
  ret void

plain:
  call void @descend(i64 %next)
  call void @touch(ptr %frame, i64 %level)
  ret void
}

define void @overflow_if(i64 %phase) {
entry:
  %chosen = load i64, ptr @jitlock_example_iterations
  %now = icmp eq i64 %chosen, %phase
  br i1 %now, label %overflow, label %done

overflow:
  call void @descend(i64 0)
  br label %done

done:
  ret void
}

define void @jitlock_example_setup() {
entry:
  call void @overflow_if(i64 1)
  ret void
}

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  call void @jitlock.monitor.enter(ptr @lock)
  %count.addr = getelementptr inbounds %Object, ptr @lock, i32 0, i32 1
  %count = load i64, ptr %count.addr
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  call void @jitlock.monitor.exit(ptr @lock)
  ret i64 1
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  call void @overflow_if(i64 2)
  call void @jitlock.monitor.enter(ptr @lock)
  %count.addr = getelementptr inbounds %Object, ptr @lock, i32 0, i32 1
  %count = load i64, ptr %count.addr
  call void @jitlock.monitor.exit(ptr @lock)
  %bad = icmp ne i64 %count, %nthreads
  %r = zext i1 %bad to i64
  ret i64 %r
}
