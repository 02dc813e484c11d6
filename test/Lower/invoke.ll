; An invoke of jitlock.monitor.enter/exit is lowered like a call: the
; runtime never unwinds, so the invoke becomes a call, lowered as usual, and a
; branch to its normal destination; the unwind edge goes away (a landing pad
; left without predecessors stays, unreachable). PHIs in the normal
; destination name the block the lowering branches from. (Invokes used to
; pass the verifier and then be left in place, calling the undefined
; jitlock.monitor.* functions.)
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s --implicit-check-not='@jitlock.'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s \
; RUN:   | FileCheck %s --check-prefix=RUNTIME --implicit-check-not='@jitlock.'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O2 --implicit-check-not='@jitlock.'

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare i32 @__gxx_personality_v0(...)

define void @f(ptr %o) personality ptr @__gxx_personality_v0 {
entry:
  invoke void @jitlock.monitor.enter(ptr %o) to label %ok unwind label %lp
ok:
  call void @work()
  invoke void @jitlock.monitor.exit(ptr %o) to label %done unwind label %lp
done:
  ret void
lp:
  %x = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %x
}

; Two invoking enters reach one normal destination with a PHI; the unwind
; destinations have a PHI and a plain call of exit.
define i32 @g(ptr %o, i1 %c) personality ptr @__gxx_personality_v0 {
entry:
  br i1 %c, label %a, label %b
a:
  invoke void @jitlock.monitor.enter(ptr %o) to label %locked unwind label %lp
b:
  call void @work()
  invoke void @jitlock.monitor.enter(ptr %o) to label %locked unwind label %lp
locked:
  %v = phi i32 [ 1, %a ], [ 2, %b ]
  invoke void @work() to label %out unwind label %cleanup
out:
  invoke void @jitlock.monitor.exit(ptr %o) to label %done unwind label %lp
done:
  ret i32 %v
lp:
  %w = phi i32 [ 10, %a ], [ 20, %b ], [ 30, %out ]
  %x = landingpad { ptr, i32 } cleanup
  ret i32 %w
cleanup:
  %y = landingpad { ptr, i32 } cleanup
  call void @jitlock.monitor.exit(ptr %o)
  resume { ptr, i32 } %y
}

; CHECK-LABEL: define void @f(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic
; CHECK-NOT:   invoke
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)
; CHECK:       jitlock.enter.done:
; CHECK-NEXT:    br label %ok
; CHECK:       ok:
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    %jitlock.top{{[0-9]*}} = load atomic i32, ptr %jitlock.thread monotonic
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)
; CHECK:       jitlock.exit.done:
; CHECK-NEXT:    br label %done
; CHECK:       done:
; CHECK-NEXT:    ret void
; CHECK:       lp: ; No predecessors!
; CHECK-NEXT:    landingpad
; CHECK-NEXT:      cleanup
; CHECK-NEXT:    resume { ptr, i32 } %x
; CHECK-NEXT:  }

; CHECK-LABEL: define i32 @g(
; CHECK-NOT:   invoke void @jitlock
; CHECK:       [[DONE_A:jitlock.enter.done[0-9]*]]:
; CHECK-NEXT:    br label %locked
; CHECK:       [[DONE_B:jitlock.enter.done[0-9]*]]:
; CHECK-NEXT:    br label %locked
; CHECK:       locked:
; CHECK-NEXT:    %v = phi i32 [ 1, %[[DONE_A]] ], [ 2, %[[DONE_B]] ]
; CHECK-NEXT:    invoke void @work()
; CHECK-NEXT:    to label %out unwind label %cleanup
; CHECK:       [[EXIT_DONE:jitlock.exit.done[0-9]*]]:
; CHECK-NEXT:    br label %done
; CHECK:       done:
; CHECK-NEXT:    ret i32 %v
; CHECK:       cleanup:
; CHECK-NEXT:    landingpad
; CHECK-NEXT:      cleanup
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)
; CHECK:         resume
; CHECK:       !"jitlock.lowered-layout"

; RUNTIME-LABEL: define void @f(
; RUNTIME-NEXT:  entry:
; RUNTIME-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)
; RUNTIME-NEXT:    br label %ok
; RUNTIME:       ok:
; RUNTIME-NEXT:    call void @work()
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)
; RUNTIME-NEXT:    br label %done

; The optimizer then deletes the unreachable landing pads.
; O2-LABEL: define void @f(
; O2-NOT:     invoke
; O2-NOT:     landingpad
; O2:         cmpxchg ptr %o, {{.*}} acquire monotonic
; O2:         call i32 @jitlock_rt_monitor_enter_slow(
; O2:       ok:
; O2-NEXT:    call void @work()
; O2:         cmpxchg ptr %o, {{.*}} release monotonic
; O2:         call i32 @jitlock_rt_monitor_exit_slow(
; O2:       done:
; O2-NEXT:    ret void
; O2-NEXT:  }
; O2-LABEL: define {{.*}}i32 @g(
; O2-NOT:     invoke void @jitlock
; O2-NOT:   define
; O2:         ret i32
