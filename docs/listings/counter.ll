; counter.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; synchronized (o) { *c += 1; }
define void @counter(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
