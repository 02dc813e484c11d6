; Slow paths are cold: every conditional branch that can lead to a
; jitlock.*.slow block carries branch weights that favour the fast path
; (1:1048575), and the runtime calls have the `cold` call-site attribute, so
; that block placement moves them out of line. The recursion tests (E4, X3)
; are between two fast outcomes and carry no weights. M1's owner test and
; N2's recursion test favour the first acquisition and the last exit.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @pair(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @pair(
; Taken branch to the slow side: weights 1:N.
; CHECK:         br i1 %jitlock.stack.full, label %jitlock.enter.slow, label %jitlock.enter.header, !prof [[UNLIKELY:![0-9]+]]
; CHECK:         br i1 %jitlock.has.monitor, label %jitlock.enter.inflated, label %jitlock.enter.top, !prof [[UNLIKELY]]
; CHECK:         br i1 %jitlock.recursive, label %jitlock.enter.push, label %jitlock.enter.cas{{$}}
; Fall-through to the slow side: weights N:1.
; CHECK:         br i1 {{%[0-9]+}}, label %jitlock.enter.push, label %jitlock.enter.slow, !prof [[LIKELY:![0-9]+]]
; CHECK:         br i1 %jitlock.is.monitor, label %jitlock.enter.monitor, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.owner.is.free, label %jitlock.enter.monitor.cas, label %jitlock.enter.owned, !prof [[LIKELY]]
; CHECK:         br i1 {{%[0-9]+}}, label %jitlock.enter.done, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.owner.is.self, label %jitlock.enter.monitor.recursive, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow({{.*}}) [[COLD:#[0-9]+]]
;
; CHECK:         br i1 %jitlock.on.top, label %jitlock.exit.pop, label %jitlock.exit.inflated, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.recursive{{[0-9]+}}, label %jitlock.exit.done, label %jitlock.exit.unlock{{$}}
; CHECK:         br i1 %jitlock.is.fast, label %jitlock.exit.cas, label %jitlock.exit.restore, !prof [[LIKELY]]
; CHECK:         br i1 {{%[0-9]+}}, label %jitlock.exit.done, label %jitlock.exit.restore, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.is.monitor{{[0-9]+}}, label %jitlock.exit.monitor, label %jitlock.exit.slow, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.owner.is.self{{[0-9]*}}, label %jitlock.exit.owned, label %jitlock.exit.slow, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.no.recursion, label %jitlock.exit.release, label %jitlock.exit.monitor.recursive, !prof [[LIKELY]]
; CHECK:         br i1 %jitlock.none.queued, label %jitlock.exit.done, label %jitlock.exit.queued, !prof [[LIKELY]]
; CHECK:       jitlock.exit.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow({{.*}}) [[COLD]]
; CHECK:       jitlock.exit.queued:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_queued_slow({{.*}}) [[COLD]]
;
; CHECK:       attributes [[COLD]] = { cold }
; CHECK-DAG:   [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048575}
; CHECK-DAG:   [[LIKELY]] = !{!"branch_weights", i32 1048575, i32 1}
