; Lowering removes the "jitlock-stack-bang" attribute, so lowering the
; output again, in any mode, adds no second check; two lowerings in one
; pipeline are the same as one. The layout stamp is added once.
;
; (Input from stdin, so that every ModuleID is the same.)
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S < %s -o %t.once.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S < %t.once.ll -o %t.twice.ll
; RUN: diff %t.once.ll %t.twice.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='jitlock-lower<bang=always>' \
; RUN:   -S < %t.once.ll -o %t.always.ll
; RUN: diff %t.once.ll %t.always.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='jitlock-lower,jitlock-lower' \
; RUN:   -S < %s -o %t.pipeline.ll
; RUN: diff %t.once.ll %t.pipeline.ll
; RUN: FileCheck %s < %t.twice.ll

define void @f() "jitlock-stack-bang"="128" {
entry:
  ret void
}

; CHECK-LABEL: define void @f()
; CHECK:         call ptr @llvm.stacksave
; CHECK-NOT:     call ptr @llvm.stacksave
; CHECK:         declare ptr @llvm.stacksave
; CHECK:         !llvm.module.flags = !{![[STAMP:[0-9]+]], !{{[0-9]+}}}
; CHECK:         ![[STAMP]] = !{i32 1, !"jitlock.lowered-layout"
; CHECK-NOT:     !"jitlock.lowered-layout"
