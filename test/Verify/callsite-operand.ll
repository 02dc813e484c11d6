; The declaration is right but a call passes a non-pointer (the call's own
; function type differs from the declaration's): diagnosed at that call.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.monitor.enter(ptr)

define void @mixed(ptr %good, i64 %bad) {
entry:
  call void @jitlock.monitor.enter(ptr %good)
  call void @jitlock.monitor.enter(i64 %bad)
  ret void
}

; CHECK: error: jitlock: in function 'mixed': wrong signature or non-pointer operand: expected 'void jitlock.monitor.enter(ptr)': call void @jitlock.monitor.enter(i64 %bad)
