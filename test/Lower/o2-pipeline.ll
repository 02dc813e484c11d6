; Loading the plugin is enough for the default O1-O3 pipelines to lower the
; calls. The lowering is registered at the start of the pipeline
; (PipelineStartEP), before the optimizer: every function is lowered where it
; is written, and the optimizer (inliner included) then works on the lowered
; fast paths along with the code around them, so block names and shapes are
; whatever it makes of them. What must hold: no jitlock.* call is left, each
; enter has its acquiring CAS on the object and each exit its releasing one,
; the critical section stays between them, and the slow calls are there and
; cold.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --implicit-check-not='@jitlock.'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O1>' \
; RUN:   -S %s | FileCheck %s --implicit-check-not='@jitlock.'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O3>' \
; RUN:   -S %s | FileCheck %s --implicit-check-not='@jitlock.'
; Without the plugin nothing is lowered (the check is not vacuous).
; RUN: opt -passes='default<O2>' -S %s | FileCheck %s --check-prefix=PLAIN

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define internal void @increment(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @twice(ptr %o, ptr %c) {
entry:
  call void @increment(ptr %o, ptr %c)
  call void @increment(ptr %o, ptr %c)
  ret void
}

; An internal function with one call site is inlined after it was lowered:
; its fast paths end up nested inside the caller's.
define internal void @inner(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  store i32 1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @outer(ptr %p, ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %p)
  call void @inner(ptr %o, ptr %c)
  call void @jitlock.monitor.exit(ptr %p)
  ret void
}

; @increment is lowered in place: the thread once, at the top; one CAS on the
; header (acquire) on the enter path, the critical section, one CAS on the
; header (release) on the exit path. (The other CASes are on a monitor's
; owner word, not on %o.)
; CHECK-LABEL: define internal {{.*}}void @increment(ptr %o,
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = tail call ptr @jitlock_rt_code_thread()
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr {{(nonnull )?}}%jitlock.thread, ptr {{(nonnull )?}}%o) [[COLD:#[0-9]+]]
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         load i32, ptr %c
; CHECK:         store i32 {{.*}}, ptr %c
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr {{(nonnull )?}}%jitlock.thread, ptr {{(nonnull )?}}%o) [[COLD]]
; CHECK-NOT:     cmpxchg ptr %o,
; CHECK:         ret void
; CHECK-NEXT:  }

; With two call sites, the lowered @increment is over the inliner's
; threshold (it was under it while the monitor operations were calls), so
; @twice still calls it.
; CHECK-LABEL: define void @twice(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    tail call {{.*}}void @increment(ptr %o, ptr %c)
; CHECK-NEXT:    tail call {{.*}}void @increment(ptr %o, ptr %c)
; CHECK-NEXT:    ret void

; @inner, inlined into @outer: enter p, enter o, the store, exit o, exit p.
; CHECK-LABEL: define void @outer(
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         cmpxchg ptr %p, {{.*}} acquire monotonic
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow({{.*}}%p) [[COLD]]
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow({{.*}}%o) [[COLD]]
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         store i32 1, ptr %c
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow({{.*}}%o) [[COLD]]
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         cmpxchg ptr %p, {{.*}} release monotonic
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow({{.*}}%p) [[COLD]]
; CHECK-NOT:     cmpxchg ptr %{{[op]}},
; CHECK:         ret void
; CHECK-NEXT:  }
; CHECK-NOT:   define {{.*}}@inner(

; CHECK:       attributes [[COLD]] = { cold }
; CHECK:       !"jitlock.lowered-layout"
; CHECK:       !"jitlock.lowered-thread", !"call"}

; PLAIN-LABEL: define void @twice(
; PLAIN-COUNT-2: call void @jitlock.monitor.enter(ptr %o)
; PLAIN-NOT:   cmpxchg
