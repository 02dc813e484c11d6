; A jitlock.thread module flag that is not one of the three mode names.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/name.ll 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/int.ll 2>&1 | FileCheck %s
; A misaligned header offset from a flag.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/header.ll 2>&1 | FileCheck %s --check-prefix=ALIGN

; CHECK: error: jitlock: module flag jitlock.thread{{.*}}; expected tls|arg|call
; ALIGN: error: jitlock: header-offset must be a multiple of 8

;--- name.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"fiber"}

;--- int.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", i32 1}

;--- header.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.header-offset", i32 12}
