; run() returns still holding a lock (jitlock-verify allows it: a missing
; exit is not a bad exit). The thread cannot detach: exit status 1.
%Object = type { i64, i64 }
@obj = global %Object { i64 1, i64 0 }

declare void @jitlock.monitor.enter(ptr)

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %mine = icmp eq i64 %tid, 0
  br i1 %mine, label %lock, label %done

lock:
  call void @jitlock.monitor.enter(ptr @obj)
  br label %done

done:
  ret i64 0
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  ret i64 0
}
