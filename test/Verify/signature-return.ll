; A monitor function declared with a result is diagnosed.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare i32 @jitlock.monitor.exit(ptr)

define i32 @unlock(ptr %o) {
entry:
  %status = call i32 @jitlock.monitor.exit(ptr %o)
  ret i32 %status
}

; CHECK: error: jitlock: in function 'unlock': wrong signature or non-pointer operand: expected 'void jitlock.monitor.exit(ptr)': %status = call i32 @jitlock.monitor.exit(ptr %o)
