; A monitor function with two parameters, or a variadic one, is diagnosed.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/two.ll 2>&1 | FileCheck %s --check-prefix=TWO
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/varargs.ll 2>&1 | FileCheck %s --check-prefix=VARARGS

; TWO: error: jitlock: in function 'f': wrong signature or non-pointer operand: expected 'void jitlock.monitor.enter(ptr)': call void @jitlock.monitor.enter(ptr %o, ptr %t)
; VARARGS: error: jitlock: in function 'g': wrong signature or non-pointer operand: expected 'void jitlock.monitor.exit(ptr)': call void (ptr, ...) @jitlock.monitor.exit(ptr %o)

;--- two.ll
declare void @jitlock.monitor.enter(ptr, ptr)
define void @f(ptr %o, ptr %t) {
  call void @jitlock.monitor.enter(ptr %o, ptr %t)
  ret void
}

;--- varargs.ll
declare void @jitlock.monitor.exit(ptr, ...)
define void @g(ptr %o) {
  call void (ptr, ...) @jitlock.monitor.exit(ptr %o)
  ret void
}
