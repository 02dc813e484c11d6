; Fails jitlock-verify: an exit with no matching enter on the else path.
%Object = type { i64, i64 }
@obj = global %Object { i64 1, i64 0 }

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %even = icmp eq i64 %tid, 0
  br i1 %even, label %lock, label %unlock

lock:
  call void @jitlock.monitor.enter(ptr @obj)
  br label %unlock

unlock:
  call void @jitlock.monitor.exit(ptr @obj)
  ret i64 0
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  ret i64 0
}
