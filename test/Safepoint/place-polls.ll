; jitlock-place-polls places the polls of polls=auto, as
; jitlock.safepoint.poll() calls that it leaves unlowered: named in pipeline
; text it places them whatever the poll mode, with a remark for each poll
; placed and an analysis remark for each loop or return left without one.
; jitlock-lower-safepoints only lowers polls: alone it places none, even
; with polls=auto. jitlock-lower and the default pipelines run both, and
; place polls only for polls=auto (parameter or module flag).
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-place-polls -S %t/plain.ll | FileCheck %s --check-prefix=PLACE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-place-polls<polls=explicit>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=PLACE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-place-polls -disable-output -pass-remarks=jitlock \
; RUN:   -pass-remarks-analysis=jitlock %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; Placing twice places nothing more (stdin keeps the ModuleIDs the same).
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-place-polls -S < %t/plain.ll -o %t/once.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-place-polls -S < %t/once.ll | diff %t/once.ll -
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-safepoints<polls=auto>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=NONE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower-safepoints -S %t/auto-flag.ll \
; RUN:   | FileCheck %s --check-prefix=NONE
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-place-polls,jitlock-lower-safepoints' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=LOWERED
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=LOWERED
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -S %t/auto-flag.ll \
; RUN:   | FileCheck %s --check-prefix=LOWERED
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -S %t/auto-flag.ll \
; RUN:   | FileCheck %s --check-prefix=LOWERED
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O1>' -S %t/auto-flag.ll \
; RUN:   | FileCheck %s --check-prefix=LOWERED
; With polls=explicit the pipelines place none.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -S %t/plain.ll | FileCheck %s --check-prefix=NONE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -S %t/plain.ll | FileCheck %s --check-prefix=NONE

; One poll on the loop's back-edge, one before the return; nothing lowered.
; PLACE-LABEL:    define void @count(
; PLACE-SAME:       [[ATTRS:#[0-9]+]]
; PLACE:          loop:
; PLACE:            %more = icmp
; PLACE-NEXT:       call void @jitlock.safepoint.poll()
; PLACE-NEXT:       br i1 %more, label %loop, label %out
; PLACE:          out:
; PLACE-NEXT:       call void @jitlock.safepoint.poll()
; PLACE-NEXT:       ret void
; PLACE-NOT:      jitlock_rt_safepoint_poll
; PLACE-NOT:      jitlock.thread
; PLACE:          attributes [[ATTRS]] = { {{.*}}"jitlock-polls-placed"{{.*}} }

; REMARK-DAG:     remark: {{.*}}safepoint poll placed in 'count' on the loop back-edge from %loop to %loop
; REMARK-DAG:     remark: {{.*}}safepoint poll placed in 'count' before the return in %out
; REMARK-DAG:     remark: {{.*}}no poll placed in 'tail' before the return in %entry: it follows a call to @work in %entry
; REMARK-NOT:     lowered

; NONE-LABEL:     define void @count(
; NONE-NOT:         call
; NONE:             ret void
; NONE-NEXT:      }
; NONE-NOT:       jitlock-polls-placed

; LOWERED-LABEL:  define void @count(
; LOWERED:          call void @jitlock_rt_safepoint_poll(
; LOWERED:          call void @jitlock_rt_safepoint_poll(
; LOWERED-NOT:      call void @jitlock_rt_safepoint_poll(
; LOWERED-LABEL:  define void @tail(
; LOWERED-NOT:      call void @jitlock_rt_safepoint_poll(
; LOWERED:        "jitlock-polls-placed"

;--- plain.ll
declare void @work()

define void @count(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  store volatile i64 %i.next, ptr %p
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

define void @tail() {
entry:
  call void @work()
  ret void
}

;--- auto-flag.ll
declare void @work()

define void @count(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  store volatile i64 %i.next, ptr %p
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

define void @tail() {
entry:
  call void @work()
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"auto"}
