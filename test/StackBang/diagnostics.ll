; Bad "jitlock-stack-bang" input is an error naming the function, never a
; crash: a value that is not a decimal byte count (words, a sign, hex,
; spaces, too many digits), one larger than any stack (more than 1 GiB), and
; the attribute on a declaration. (opt stops at the first error, so one case
; per file.)
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/words.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=words -DV=lots
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/negative.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=negative -DV=-4096
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/hex.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=hex -DV=0x1000
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/spaces.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=spaces '-DV= 64'
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/digits.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=digits -DV=99999999999999999999999
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/absurd.ll 2>&1 | FileCheck %s --check-prefix=ABSURD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/declared.ll 2>&1 | FileCheck %s --check-prefix=DECLARED
; The pass alone reports the same.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower-stack-bang \
; RUN:   -disable-output %t/words.ll 2>&1 | FileCheck %s --check-prefix=VALUE -DF=words -DV=lots
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower-stack-bang \
; RUN:   -disable-output %t/declared.ll 2>&1 | FileCheck %s --check-prefix=DECLARED
; The largest accepted value is 1 GiB.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/largest.ll | FileCheck %s --check-prefix=LARGEST

; VALUE:    error: jitlock: in function '[[F]]': "jitlock-stack-bang" must be empty or a decimal count of extra frame bytes, got "[[V]]"{{$}}
; ABSURD:   error: jitlock: in function 'absurd': "jitlock-stack-bang"="1073741825" is larger than any thread stack (at most 1073741824 extra frame bytes)
; DECLARED: error: jitlock: in function 'declared': "jitlock-stack-bang" is on a declaration; only a definition can check its stack at entry
; LARGEST:  %jitlock.sp.needed = sub i64 %jitlock.sp, 1073741824

;--- words.ll
define void @words() "jitlock-stack-bang"="lots" {
  ret void
}
;--- negative.ll
define void @negative() "jitlock-stack-bang"="-4096" {
  ret void
}
;--- hex.ll
define void @hex() "jitlock-stack-bang"="0x1000" {
  ret void
}
;--- spaces.ll
define void @spaces() "jitlock-stack-bang"=" 64" {
  ret void
}
;--- digits.ll
define void @digits() "jitlock-stack-bang"="99999999999999999999999" {
  ret void
}
;--- absurd.ll
define void @absurd() "jitlock-stack-bang"="1073741825" {
  ret void
}
;--- declared.ll
declare void @declared() "jitlock-stack-bang"
define void @caller() {
  call void @declared()
  ret void
}
;--- largest.ll
define void @largest() "jitlock-stack-bang"="1073741824" {
  ret void
}
