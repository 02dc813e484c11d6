; jitlock.thread() must return a pointer and take nothing.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/int.ll 2>&1 | FileCheck %s --check-prefix=INT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/param.ll 2>&1 | FileCheck %s --check-prefix=PARAM

; INT: error: jitlock: in function 'tid': wrong signature: expected 'ptr jitlock.thread()': %t = call i64 @jitlock.thread()
; PARAM: error: jitlock: in function 'of': wrong signature: expected 'ptr jitlock.thread()': %t = call ptr @jitlock.thread(ptr %o)

;--- int.ll
declare i64 @jitlock.thread()
define i64 @tid() {
  %t = call i64 @jitlock.thread()
  ret i64 %t
}

;--- param.ll
declare ptr @jitlock.thread(ptr)
define ptr @of(ptr %o) {
  %t = call ptr @jitlock.thread(ptr %o)
  ret ptr %t
}
