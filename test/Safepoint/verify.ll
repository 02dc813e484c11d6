; jitlock-verify checks jitlock.safepoint.poll like the monitor functions:
; a call with another signature, and any use other than as the callee of a
; direct call (its address stored, passed, selected, or called indirectly),
; is an error naming the function and the instruction; so is a definition.
; A well-formed poll passes.
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/ok.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/returns.ll 2>&1 | FileCheck %s --check-prefix=RETURNS
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/returns.ll 2>&1 | FileCheck %s --check-prefix=RETURNS
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/operand.ll 2>&1 | FileCheck %s --check-prefix=OPERAND
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/varargs.ll 2>&1 | FileCheck %s --check-prefix=VARARGS
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/mismatch.ll 2>&1 | FileCheck %s --check-prefix=MISMATCH
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/store.ll 2>&1 | FileCheck %s --check-prefix=STORE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/indirect.ll 2>&1 | FileCheck %s --check-prefix=INDIRECT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/argument.ll 2>&1 | FileCheck %s --check-prefix=ARGUMENT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/global.ll 2>&1 | FileCheck %s --check-prefix=GLOBAL
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/defined.ll 2>&1 | FileCheck %s --check-prefix=DEFINED
; The default pipeline verifies too, and lowers nothing it refused.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/returns.ll 2>&1 | FileCheck %s --check-prefix=RETURNS

; RETURNS: error: jitlock: in function 'returns': wrong signature: expected 'void jitlock.safepoint.poll()': %r = call i32 @jitlock.safepoint.poll()
; OPERAND: error: jitlock: in function 'operand': wrong signature: expected 'void jitlock.safepoint.poll()': call void @jitlock.safepoint.poll(ptr %t)
; VARARGS: error: jitlock: in function 'varargs': wrong signature: expected 'void jitlock.safepoint.poll()': call void (...) @jitlock.safepoint.poll()
; MISMATCH: error: jitlock: in function 'mismatch': wrong signature: expected 'void jitlock.safepoint.poll()': call void @jitlock.safepoint.poll(i64 1)
; STORE: error: jitlock: in function 'stores': the address of 'jitlock.safepoint.poll' is taken; jitlock functions may only be called directly: store ptr @jitlock.safepoint.poll, ptr %slot
; INDIRECT: error: jitlock: in function 'indirect': the address of 'jitlock.safepoint.poll' is taken; jitlock functions may only be called directly: %f = select i1 %c, ptr @jitlock.safepoint.poll, ptr %other
; ARGUMENT: error: jitlock: in function 'passes': the address of 'jitlock.safepoint.poll' is taken; jitlock functions may only be called directly: call void @register(ptr @jitlock.safepoint.poll)
; GLOBAL: error: jitlock: the address of 'jitlock.safepoint.poll' is taken; jitlock functions may only be called directly{{$}}
; DEFINED: error: jitlock: 'jitlock.safepoint.poll' must be declared, not defined

;--- ok.ll
declare void @jitlock.safepoint.poll()
define void @ok() {
  call void @jitlock.safepoint.poll()
  ret void
}

;--- returns.ll
declare i32 @jitlock.safepoint.poll()
define i32 @returns() {
  %r = call i32 @jitlock.safepoint.poll()
  ret i32 %r
}

;--- operand.ll
declare void @jitlock.safepoint.poll(ptr)
define void @operand(ptr %t) {
  call void @jitlock.safepoint.poll(ptr %t)
  ret void
}

;--- varargs.ll
declare void @jitlock.safepoint.poll(...)
define void @varargs() {
  call void (...) @jitlock.safepoint.poll()
  ret void
}

;--- mismatch.ll
; The declaration is right; the call's own function type is not.
declare void @jitlock.safepoint.poll()
define void @mismatch() {
  call void @jitlock.safepoint.poll(i64 1)
  ret void
}

;--- store.ll
declare void @jitlock.safepoint.poll()
define void @stores(ptr %slot) {
  store ptr @jitlock.safepoint.poll, ptr %slot
  ret void
}

;--- indirect.ll
declare void @jitlock.safepoint.poll()
define void @indirect(i1 %c, ptr %other) {
  %f = select i1 %c, ptr @jitlock.safepoint.poll, ptr %other
  call void %f()
  ret void
}

;--- argument.ll
declare void @jitlock.safepoint.poll()
declare void @register(ptr)
define void @passes() {
  call void @register(ptr @jitlock.safepoint.poll)
  ret void
}

;--- global.ll
declare void @jitlock.safepoint.poll()
@table = global [1 x ptr] [ptr @jitlock.safepoint.poll]

;--- defined.ll
define void @jitlock.safepoint.poll() {
entry:
  ret void
}
