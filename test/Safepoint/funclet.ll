; Inside an EH funclet (Windows-style catchpad/cleanuppad), code generation
; drops calls without a "funclet" operand bundle. The slow call of a poll
; written there carries the poll's bundle, and a poll that polls=auto places
; in a funclet (a loop inside a catch handler) gets the funclet's bundle.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto;no-inline>' -S %s | FileCheck %s --check-prefix=RUNTIME

declare void @jitlock.safepoint.poll()
declare void @may_throw()
declare i32 @__CxxFrameHandler3(...)

define void @f(ptr %p) personality ptr @__CxxFrameHandler3 {
entry:
  invoke void @may_throw() to label %out unwind label %dispatch
dispatch:
  %cs = catchswitch within none [label %handler] unwind to caller
handler:
  %cp = catchpad within %cs [ptr null, i32 64, ptr null]
  call void @jitlock.safepoint.poll() [ "funclet"(token %cp) ]
  br label %spin
spin:
  %x = load volatile i1, ptr %p
  br i1 %x, label %spin, label %caught
caught:
  catchret from %cp to label %out
out:
  ret void
}

; CHECK-LABEL: define void @f(
; CHECK:       handler:
; CHECK-NEXT:    %cp = catchpad within %cs
; CHECK:         br i1 %jitlock.poll.armed, label %jitlock.poll.slow, label %jitlock.poll.done
; CHECK:       jitlock.poll.slow:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}} [ "funclet"(token %cp) ]
; The loop in the handler: its back-edge poll is in the funclet too.
; CHECK:       spin:
; CHECK:       jitlock.poll.slow{{[0-9]+}}:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}} [ "funclet"(token %cp) ]
; The return is outside every funclet.
; CHECK:       out:
; CHECK:       jitlock.poll.slow{{[0-9]+}}:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}}{{$}}

; RUNTIME-LABEL: define void @f(
; RUNTIME:       handler:
; RUNTIME-NEXT:    %cp = catchpad within %cs
; RUNTIME-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) [ "funclet"(token %cp) ]
; RUNTIME:       spin:
; RUNTIME-NEXT:    %x = load volatile i1, ptr %p
; RUNTIME-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) [ "funclet"(token %cp) ]
; RUNTIME-NEXT:    br i1 %x, label %spin, label %caught
; RUNTIME:       out:
; RUNTIME-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread){{$}}
; RUNTIME-NEXT:    ret void
