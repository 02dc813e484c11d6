; jitlock.safepoint.poll is part of the contract's names but not supported by
; this version: a diagnostic, not a silently unresolved call.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

declare void @jitlock.safepoint.poll()

define void @backedge(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.safepoint.poll()
  %i.next = add i32 %i, 1
  %more = icmp slt i32 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK: error: jitlock: in function 'backedge': jitlock.safepoint.poll is not supported by this version of jitlock: call void @jitlock.safepoint.poll()
