; poll.ll
declare void @jitlock.safepoint.poll()

; for (i = 0; i < n; ++i) { ++*counter; safepoint poll; }
define void @count(ptr %counter, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load i64, ptr %counter
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %counter
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}
