; The poll mode comes from the polls=none|explicit|auto parameter (of
; jitlock-lower and of jitlock-lower-safepoints), from the string module flag
; jitlock.polls, or from LoweringConfig::Polls; the default is explicit. A
; parameter and a flag that disagree are a conflicting configuration, named
; with both values; a bad value in either is an error.
;
; RUN: split-file %s %t
; The default lowers the frontend's poll and places none.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/plain.ll | FileCheck %s --check-prefix=EXPLICIT
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=explicit>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=EXPLICIT
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-place-polls,jitlock-lower-safepoints<polls=auto>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=none>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=NONE
; The flag alone selects the mode; a parameter that agrees is fine.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/auto-flag.ll | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %t/auto-flag.ll \
; RUN:   | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %t/auto-flag.ll | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/none-flag.ll | FileCheck %s --check-prefix=NONE
; One that disagrees is a conflict.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=explicit>' -disable-output %t/auto-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-safepoints<polls=explicit>' -disable-output %t/auto-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; Bad values.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/bad-name.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/bad-type.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=always>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BADPARAM
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-safepoints<polls>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EMPTYPARAM

; EXPLICIT-LABEL: define void @f(
; EXPLICIT:         call void @jitlock_rt_safepoint_poll(
; EXPLICIT-NOT:     call void @jitlock_rt_safepoint_poll(
; EXPLICIT-NOT:     jitlock-polls-placed

; The frontend's poll in the loop, and one placed before the return.
; AUTO-LABEL:     define void @f(
; AUTO-SAME:        [[ATTRS:#[0-9]+]]
; AUTO:             call void @jitlock_rt_safepoint_poll(
; AUTO:             call void @jitlock_rt_safepoint_poll(
; AUTO-NOT:         call void @jitlock_rt_safepoint_poll(
; AUTO:           attributes [[ATTRS]] = { {{.*}}"jitlock-polls-placed"{{.*}} }

; Nothing is compiled in, so nothing is stamped.
; NONE-LABEL:     define void @f(
; NONE-NOT:         call
; NONE:             ret void
; NONE-NEXT:      }
; NONE-NOT:       declare
; NONE-NOT:       jitlock.lowered-layout

; CONFLICT:       error: jitlock: conflicting configuration: polls is explicit in the pass configuration but auto in module flag jitlock.polls
; BADFLAG:        error: jitlock: module flag jitlock.polls{{.*}}; expected none|explicit|auto
; BADPARAM:       unknown polls 'always'; expected none|explicit|auto
; EMPTYPARAM:     unknown polls ''; expected none|explicit|auto

;--- plain.ll
declare void @jitlock.safepoint.poll()
define void @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

;--- auto-flag.ll
declare void @jitlock.safepoint.poll()
define void @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"auto"}

;--- none-flag.ll
declare void @jitlock.safepoint.poll()
define void @f(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"none"}

;--- bad-name.ll
declare void @jitlock.safepoint.poll()
define void @f() {
  call void @jitlock.safepoint.poll()
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"sometimes"}

;--- bad-type.ll
declare void @jitlock.safepoint.poll()
define void @f() {
  call void @jitlock.safepoint.poll()
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", i32 2}
