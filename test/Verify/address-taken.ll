; Taking the address of a jitlock.* function is diagnosed: nothing can lower
; an indirect call to one, so a function pointer to it would call the
; undefined symbol at run time. The instruction that takes the address is
; named; a constant initializer, which has no function, is not.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/store.ll 2>&1 | FileCheck %s --check-prefix=STORE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/store.ll 2>&1 | FileCheck %s --check-prefix=STORE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/store.ll 2>&1 | FileCheck %s --check-prefix=STORE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/indirect.ll 2>&1 | FileCheck %s --check-prefix=INDIRECT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/argument.ll 2>&1 | FileCheck %s --check-prefix=ARGUMENT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/operand.ll 2>&1 | FileCheck %s --check-prefix=OPERAND
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/global.ll 2>&1 | FileCheck %s --check-prefix=GLOBAL

; STORE: error: jitlock: in function 'stores': the address of 'jitlock.monitor.enter' is taken; jitlock functions may only be called directly: store ptr @jitlock.monitor.enter, ptr %slot
; INDIRECT: error: jitlock: in function 'indirect': the address of 'jitlock.monitor.exit' is taken; jitlock functions may only be called directly: %f = select i1 %c, ptr @jitlock.monitor.exit, ptr %other
; ARGUMENT: error: jitlock: in function 'passes': the address of 'jitlock.thread' is taken; jitlock functions may only be called directly: call void @register(ptr @jitlock.thread)
; OPERAND: error: jitlock: in function 'operand': the address of 'jitlock.monitor.exit' is taken; jitlock functions may only be called directly: call void @jitlock.monitor.enter(ptr @jitlock.monitor.exit)
; GLOBAL: error: jitlock: the address of 'jitlock.monitor.enter' is taken; jitlock functions may only be called directly{{$}}

;--- store.ll
declare void @jitlock.monitor.enter(ptr)
define void @stores(ptr %slot) {
  store ptr @jitlock.monitor.enter, ptr %slot
  ret void
}

;--- indirect.ll
declare void @jitlock.monitor.exit(ptr)
define void @indirect(ptr %o, i1 %c, ptr %other) {
  %f = select i1 %c, ptr @jitlock.monitor.exit, ptr %other
  call void %f(ptr %o)
  ret void
}

;--- argument.ll
declare ptr @jitlock.thread()
declare void @register(ptr)
define void @passes() {
  call void @register(ptr @jitlock.thread)
  ret void
}

;--- operand.ll
; A monitor call whose operand is the address of another jitlock function.
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
define void @operand() {
  call void @jitlock.monitor.enter(ptr @jitlock.monitor.exit)
  ret void
}

;--- global.ll
declare void @jitlock.monitor.enter(ptr)
@table = global [1 x ptr] [ptr @jitlock.monitor.enter]
