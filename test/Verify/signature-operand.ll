; A monitor function declared with a non-pointer operand is diagnosed at each
; call, naming the function and the call; opt fails.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.monitor.enter(i64)

define void @lock_word(i64 %word) {
entry:
  call void @jitlock.monitor.enter(i64 %word)
  ret void
}

; CHECK: error: jitlock: in function 'lock_word': wrong signature or non-pointer operand: expected 'void jitlock.monitor.enter(ptr)': call void @jitlock.monitor.enter(i64 %word)
; CHECK-NOT: Stack dump
