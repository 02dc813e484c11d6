; A pass parameter that disagrees with a module flag is a conflicting
; configuration, named with both values.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -disable-output %s 2>&1 | FileCheck %s
; The flag alone is fine.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s

declare void @jitlock.monitor.enter(ptr)

define void @f(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"arg"}

; CHECK: error: jitlock: conflicting configuration: thread is call in the pass configuration but arg in module flag jitlock.thread
