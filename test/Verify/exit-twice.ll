; Straight-line code that exits once more than it enters.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @double_exit(ptr %a, ptr %b) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  ret void
}

; CHECK: error: jitlock: in function 'double_exit': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %b)
; CHECK-NOT: error:
