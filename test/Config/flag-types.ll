; An integer module flag (jitlock.capacity, jitlock.header-offset,
; jitlock.tls-offset) whose value is not an integer constant of at most 64
; bits is diagnosed, naming the flag. (A string used to be taken for a
; constant and crash opt, and a float was read as a ConstantInt:
; "capacity=-3405403806598130874".)
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/string.ll 2>&1 | FileCheck %s -DFLAG=capacity
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/string-header.ll 2>&1 | FileCheck %s -DFLAG=header-offset
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/float.ll 2>&1 | FileCheck %s -DFLAG=capacity
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/string-tls.ll 2>&1 | FileCheck %s -DFLAG=tls-offset
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/wide.ll 2>&1 | FileCheck %s -DFLAG=header-offset
; A pass parameter for the same value does not hide the bad flag.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=8>' -disable-output %t/string.ll 2>&1 \
; RUN:   | FileCheck %s -DFLAG=capacity

; CHECK: error: jitlock: module flag jitlock.[[FLAG]] must be an integer constant
; CHECK-NOT: -3405403806598130874

;--- string.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.capacity", !"8"}

;--- string-header.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.header-offset", !"-8"}

;--- float.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.capacity", float 8.0}

;--- string-tls.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0, !1}
!0 = !{i32 1, !"jitlock.thread", !"tls"}
!1 = !{i32 1, !"jitlock.tls-offset", !"-320"}

;--- wide.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.header-offset", i128 8}
