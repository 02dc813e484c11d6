; The bang mode comes from the bang=watermark|always|none parameter, or from
; the string module flag jitlock.stack-bang; the two disagreeing is a
; conflicting configuration, like every other setting. A bad value in
; either is an error.
;
; RUN: split-file %s %t
; The flag alone selects the mode.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/always.ll | FileCheck %s --check-prefix=ALWAYS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/none.ll | FileCheck %s --check-prefix=NONE
; A parameter that agrees is fine.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='jitlock-lower<bang=always>' \
; RUN:   -S %t/always.ll | FileCheck %s --check-prefix=ALWAYS
; One that disagrees is a conflict, named with both values.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=watermark>' -disable-output %t/always.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-stack-bang<bang=watermark>' -disable-output %t/always.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; Bad values.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/bad-name.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/bad-type.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=sometimes>' -disable-output %t/always.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BADPARAM
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-stack-bang<bang>' -disable-output %t/always.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EMPTYPARAM

; ALWAYS-LABEL: define void @f()
; ALWAYS:         store volatile i8 0
; ALWAYS-NOT:     @jitlock_rt_stack_bang
; NONE-LABEL:   define void @f()
; NONE-NEXT:      ret void
; CONFLICT:     error: jitlock: conflicting configuration: stack-bang is watermark in the pass configuration but always in module flag jitlock.stack-bang
; BADFLAG:      error: jitlock: module flag jitlock.stack-bang{{.*}}; expected watermark|always|none
; BADPARAM:     unknown bang 'sometimes'; expected watermark|always|none
; EMPTYPARAM:   unknown bang ''; expected watermark|always|none

;--- always.ll
define void @f() "jitlock-stack-bang" {
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.stack-bang", !"always"}

;--- none.ll
define void @f() "jitlock-stack-bang" {
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.stack-bang", !"none"}

;--- bad-name.ll
define void @f() "jitlock-stack-bang" {
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.stack-bang", !"sometimes"}

;--- bad-type.ll
define void @f() "jitlock-stack-bang" {
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.stack-bang", i32 1}
