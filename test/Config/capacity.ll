; The lock-stack capacity is the runtime's (8); asking for another one, by
; pass parameter or module flag, is a conflicting configuration. 8 is fine.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=4>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/flag.ll 2>&1 | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=8>' -disable-output %t/plain.ll
; A pass parameter and a flag that both say 4 are still wrong.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=4>' -disable-output %t/flag.ll 2>&1 \
; RUN:   | FileCheck %s
; Flag 8 and parameter 4 disagree with each other first.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=4>' -disable-output %t/flag8.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BOTH

; CHECK: error: jitlock: conflicting configuration: capacity=4, but the runtime's lock stack holds 8 entries
; BOTH: error: jitlock: conflicting configuration: capacity is 4 in the pass configuration but 8 in module flag jitlock.capacity

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
!0 = !{i32 1, !"jitlock.capacity", i32 4}

;--- flag8.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.capacity", i32 8}
