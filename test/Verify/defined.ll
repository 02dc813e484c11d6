; The frontend declares the jitlock.* functions and never defines them.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/enter.ll 2>&1 | FileCheck %s --check-prefix=ENTER
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/thread.ll 2>&1 | FileCheck %s --check-prefix=THREAD

; ENTER: error: jitlock: 'jitlock.monitor.enter' must be declared, not defined
; THREAD: error: jitlock: 'jitlock.thread' must be declared, not defined

;--- enter.ll
define void @jitlock.monitor.enter(ptr %o) {
entry:
  ret void
}

;--- thread.ll
@t = global i8 0
define ptr @jitlock.thread() {
entry:
  ret ptr @t
}
