; The thread is no managed object: it stays in the default address space
; even in a module whose objects live in another one. A "jitlock.thread"
; parameter or a jitlock.thread() declaration in another address space is an
; error, not invalid IR after lowering. (opt stops at the first error: one
; case per file.)
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %t/param.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/declared.ll 2>&1 | FileCheck %s --check-prefix=DECLARED

; PARAM: error: jitlock: in function 'gc_thread': the parameter marked "jitlock.thread" is a pointer outside the default address space: call void @jitlock.monitor.enter(ptr addrspace(1) %o)
; DECLARED: error: jitlock: in function 'gc_request': wrong signature: expected 'ptr jitlock.thread()': %t = call ptr addrspace(1) @jitlock.thread()

;--- param.ll
declare void @jitlock.monitor.enter(ptr addrspace(1))
define void @gc_thread(ptr addrspace(1) %o, ptr addrspace(1) "jitlock.thread" %t) {
entry:
  call void @jitlock.monitor.enter(ptr addrspace(1) %o)
  ret void
}

;--- declared.ll
declare ptr addrspace(1) @jitlock.thread()
define ptr addrspace(1) @gc_request() {
entry:
  %t = call ptr addrspace(1) @jitlock.thread()
  ret ptr addrspace(1) %t
}
