; An exit that some path reaches without the enter: one branch of an if/else
; skips the enter. The exit is diagnosed, naming the function and the call.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

define void @maybe_locked(ptr %o, i1 %c) {
entry:
  br i1 %c, label %then, label %else
then:
  call void @jitlock.monitor.enter(ptr %o)
  br label %join
else:
  call void @work()
  br label %join
join:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK: error: jitlock: in function 'maybe_locked': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %o)
