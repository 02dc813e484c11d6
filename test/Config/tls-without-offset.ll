; thread=tls needs the per-process tls-offset; the plugin cannot take it from
; its own process because opt is not the process that runs the code. By
; pass parameter or by module flag.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls>' -disable-output %t/plain.ll 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/flag.ll 2>&1 | FileCheck %s
; Only jitlock.thread() calls (no monitor operations): the same.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls>' -disable-output %t/thread-only.ll 2>&1 | FileCheck %s

; CHECK: error: jitlock: thread=tls needs the runtime's thread_tls_offset, which is per process: pass tls-offset=N

;--- plain.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- flag.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"tls"}

;--- thread-only.ll
declare ptr @jitlock.thread()
define ptr @f() {
  %t = call ptr @jitlock.thread()
  ret ptr %t
}
