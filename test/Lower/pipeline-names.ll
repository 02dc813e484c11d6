; The pipeline names: jitlock-lower is jitlock-verify, then
; jitlock-lower-monitors, then jitlock-lower-thread. jitlock-verify lowers
; nothing; jitlock-lower-monitors alone leaves the jitlock.thread() calls it
; creates (unnamed) for jitlock-lower-thread; the two run in sequence are
; jitlock-lower.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -S %s | FileCheck %s --check-prefix=VERIFY
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors<thread=arg>' -S %s \
; RUN:   | FileCheck %s --check-prefix=MONITORS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors<thread=arg>,jitlock-lower-thread<thread=arg>' \
; RUN:   -S %s > %t.split.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %s > %t.whole.ll
; RUN: diff %t.split.ll %t.whole.ll
; RUN: FileCheck %s --check-prefix=LOWERED < %t.whole.ll

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @f(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; VERIFY-LABEL:  define void @f(
; VERIFY-NEXT:   entry:
; VERIFY-NEXT:     call void @jitlock.monitor.enter(ptr %o)
; VERIFY-NEXT:     call void @jitlock.monitor.exit(ptr %o)
; VERIFY-NEXT:     ret void
; VERIFY-NOT:    jitlock.lowered-layout

; MONITORS-LABEL: define void @f(
; MONITORS-NEXT:  entry:
; MONITORS-NEXT:    [[T1:%[0-9]+]] = call ptr @jitlock.thread()
; MONITORS:         load atomic i32, ptr [[T1]] monotonic
; MONITORS:       jitlock.enter.done:
; MONITORS-NEXT:    [[T2:%[0-9]+]] = call ptr @jitlock.thread()
; MONITORS:       declare ptr @jitlock.thread()

; LOWERED-NOT:   @jitlock.thread(
; LOWERED:       call i32 @jitlock_rt_monitor_enter_slow(ptr %t, ptr %o)
; LOWERED:       call i32 @jitlock_rt_monitor_exit_slow(ptr %t, ptr %o)
