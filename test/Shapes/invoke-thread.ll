; An invoke of jitlock.thread(), as a frontend that makes every call in a
; try range an invoke writes it: the request never unwinds, so it becomes a
; call and a branch, and is lowered like any other request. (It used to be
; left in place, calling the undefined jitlock.thread.)
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-640>' -S %s \
; RUN:   | FileCheck %s --implicit-check-not='@jitlock.'

declare ptr @jitlock.thread()
declare void @work(ptr)
declare i32 @__gxx_personality_v0(...)

define ptr @current() personality ptr @__gxx_personality_v0 {
entry:
  %t = invoke ptr @jitlock.thread() to label %ok unwind label %lp
ok:
  invoke void @work(ptr %t) to label %done unwind label %lp
done:
  ret ptr %t
lp:
  %x = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %x
}

; CHECK-LABEL: define ptr @current(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; CHECK-NEXT:    %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -640
; CHECK-NEXT:    br label %ok
; CHECK:       ok:
; CHECK-NEXT:    invoke void @work(ptr %jitlock.thread)
; CHECK:       done:
; CHECK-NEXT:    ret ptr %jitlock.thread
; CHECK:       lp:
; CHECK-SAME:    preds = %ok
