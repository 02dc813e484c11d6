; An invoke of jitlock.safepoint.poll is lowered like a call: the runtime
; never unwinds, so it becomes a call, lowered as usual, and a branch to the
; normal destination; the landing pad loses that predecessor (and a PHI
; there its incoming value).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s --implicit-check-not='@jitlock.'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s \
; RUN:   | FileCheck %s --check-prefix=RUNTIME --implicit-check-not='@jitlock.'

declare void @jitlock.safepoint.poll()
declare void @work()
declare i32 @__gxx_personality_v0(...)

define i32 @f(i1 %c) personality ptr @__gxx_personality_v0 {
entry:
  br i1 %c, label %a, label %b
a:
  invoke void @jitlock.safepoint.poll() to label %join unwind label %lp
b:
  invoke void @work() to label %join unwind label %lp
join:
  %v = phi i32 [ 1, %a ], [ 2, %b ]
  ret i32 %v
lp:
  %w = phi i32 [ 10, %a ], [ 20, %b ]
  %x = landingpad { ptr, i32 } cleanup
  ret i32 %w
}

; CHECK-LABEL: define i32 @f(
; CHECK:       a:
; CHECK-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr %jitlock.thread
; CHECK:         br i1 %jitlock.poll.armed, label %jitlock.poll.slow, label %jitlock.poll.done
; CHECK:       jitlock.poll.slow:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; CHECK-NEXT:    br label %jitlock.poll.done
; CHECK:       jitlock.poll.done:
; CHECK-NEXT:    br label %join
; CHECK:       join:
; CHECK-NEXT:    %v = phi i32 [ 1, %jitlock.poll.done ], [ 2, %b ]
; The PHI of the landing pad is left with b's value only.
; CHECK:       lp:
; CHECK-NEXT:    %x = landingpad
; CHECK-NEXT:      cleanup
; CHECK-NEXT:    ret i32 20

; RUNTIME-LABEL: define i32 @f(
; RUNTIME:       a:
; RUNTIME-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread)
; RUNTIME-NEXT:    br label %join
; RUNTIME:       join:
; RUNTIME-NEXT:    %v = phi i32 [ 1, %a ], [ 2, %b ]
