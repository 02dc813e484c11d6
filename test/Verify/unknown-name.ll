; Any other jitlock.* function is an unknown name (a typo, or a newer
; frontend), diagnosed at the call.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.monitor.entre(ptr)

define void @typo(ptr %o) {
entry:
  call void @jitlock.monitor.entre(ptr %o)
  ret void
}

; CHECK: error: jitlock: in function 'typo': unknown jitlock function 'jitlock.monitor.entre': call void @jitlock.monitor.entre(ptr %o)
