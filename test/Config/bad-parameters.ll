; Malformed jitlock-lower parameters are rejected when the pipeline is
; parsed, with a message naming the parameter.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=fiber>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=MODE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<lock-stack=16>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=NAME
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<tls-offset=minus8>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=INT -DKEY=tls-offset -DVAL=minus8
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=INT -DKEY=header-offset -DVAL=
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=eight>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=INT -DKEY=capacity -DVAL=eight
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<inline=yes>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FLAG -DKEY=inline
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline=1>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FLAG -DKEY=no-inline
; The other parametrized names parse the same parameters.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors<thread=fiber>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=MODE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-thread<thread=fiber>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=MODE
; A header offset that is not a multiple of 8 is rejected when resolved.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=4>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ALIGN

declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

; MODE: unknown thread 'fiber'; expected tls|arg|call
; NAME: unknown jitlock-lower parameter 'lock-stack' (expected thread, bang, locking, polls, exit, tls-offset, header-offset, capacity, reserve-shift, reserve-bits, inline, no-inline or monitors)
; INT: parameter '[[KEY]]' needs an integer, got '[[VAL]]'
; FLAG: '[[KEY]]' takes no value
; ALIGN: error: jitlock: header-offset must be a multiple of 8
