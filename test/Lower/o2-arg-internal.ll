; thread=arg under the default pipeline, in an internal function. The
; lowering runs at the start of the pipeline, so the marked parameter is used
; before DeadArgumentElimination runs: the internal function keeps it, is
; lowered without errors, and its callers keep passing the thread. (This used
; to fail: with the lowering at OptimizerLast, DeadArgElim first deleted the
; then unused parameter, and the lowering reported
;   thread=arg, but no parameter of the function is marked "jitlock.thread"
; on a correct module.)
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s 2>&1 | FileCheck %s --implicit-check-not='error:'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O1>' \
; RUN:   -S %s 2>&1 | FileCheck %s --implicit-check-not='error:'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O3>' \
; RUN:   -S %s 2>&1 | FileCheck %s --implicit-check-not='error:'

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define internal void @callee(ptr "jitlock.thread" %t, ptr %o) noinline {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @caller(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @callee(ptr %t, ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"arg"}

; CHECK-LABEL: define internal {{.*}}void @callee(ptr "jitlock.thread" %t, ptr %o)
; CHECK:         load atomic i32, ptr %t monotonic
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr {{(nonnull )?}}%t, ptr {{(nonnull )?}}%o)
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr {{(nonnull )?}}%t, ptr {{(nonnull )?}}%o)
; CHECK-NOT:     @jitlock.
; CHECK:         ret void
; CHECK-NEXT:  }
; CHECK-LABEL: define void @caller(ptr "jitlock.thread" %t, ptr %o)
; CHECK-NEXT:  entry:
; CHECK-NEXT:    call {{.*}}void @callee(ptr %t, ptr %o)
; CHECK-NOT:   @jitlock.monitor
; CHECK-NOT:   @jitlock.thread(
