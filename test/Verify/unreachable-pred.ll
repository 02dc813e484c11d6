; No false positive from a predecessor that is unreachable from the entry:
; it contributes nothing to the dataflow, so an unreachable block that
; branches into a correctly locked region does not make the exits there
; "without a matching enter". (checkStructured used to read such a
; predecessor's state with In.lookup(Pred), which returned 0, "holds
; nothing".) JIT frontends emit such blocks routinely, and jitlock-lower
; runs no SimplifyCFG before the verifier.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty
; The default pipeline verifies at its start too, before SimplifyCFG.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --allow-empty

; CHECK-NOT: error

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @dead_pred(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  br label %join
dead:
  br label %join
join:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Unreachable code is not checked itself: exits there are not diagnosed.
define void @dead_exit(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
dead:
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}
