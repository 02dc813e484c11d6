; Monitor enter and exit of any object, for aarch64/detached/harness.cpp,
; which runs them on a thread that never attached. Lowered by opt with the
; jitlock plugin for each thread and locking mode (Tests.cmake).

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @detached_lock(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @detached_unlock(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
