; jitlock-elide removes a monitor re-entry that the function already holds
; around it (same SSA value, casts stripped): the inner pair becomes elided
; markers, the outer one stays. A re-entry whose exits cannot be told apart
; is kept, with a missed remark. Coarsening, which would merge the
; sequential pairs below, is off (coarsen.ll tests it).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<coarsen-limit=0>' \
; RUN:   -pass-remarks=jitlock -pass-remarks-missed=jitlock -S %s \
; RUN:   -o - 2>%t.remarks | FileCheck %s
; RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
; O1 leaves every lock alone; O2 elides (and lowers what remains).
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O1>' \
; RUN:   -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=O1 --implicit-check-not=elided
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=O2

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare i32 @personality(...)

; CHECK-LABEL: define void @nested(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a)
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} nested monitor enter of %a in 'nested' elided: the function already holds it around this pair
; O1: remark: {{.*}} monitor enter in 'nested' lowered to an inline fast path
; O2: remark: {{.*}} nested monitor enter of %a in 'nested' elided
define void @nested(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Three levels: both inner pairs go; another object in between is kept.
; CHECK-LABEL: define void @triple(
; CHECK-NEXT:    %a.cast = getelementptr i8, ptr %a, i64 0
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %b)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a.cast)
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %b)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} nested monitor enter of %a in 'triple' elided
; REMARK: remark: {{.*}} nested monitor enter of %a in 'triple' elided
define void @triple(ptr %a, ptr %b) {
  %a.cast = getelementptr i8, ptr %a, i64 0
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a.cast)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; javac's shape: the inner region has a handler that exits it and rethrows;
; both of its exits go.
; CHECK-LABEL: define void @with_handler(
; CHECK:       entry:
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a)
; CHECK:       ok:
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; CHECK:       handler:
; CHECK:         call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} nested monitor enter of %a in 'with_handler' elided
define void @with_handler(ptr %a) personality ptr @personality {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  invoke void @work() to label %ok unwind label %handler

ok:
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void

handler:
  %lp = landingpad { ptr, i32 } cleanup
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  resume { ptr, i32 } %lp
}

; Sequential, not nested: the second pair starts after the first ended.
; CHECK-LABEL: define void @sequential(
; CHECK-NOT:     elided
; CHECK:         ret void
define void @sequential(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Another lock ends inside the inner region (hand over hand): the holds of
; %a are still nested.
; CHECK-LABEL: define void @hand_over_hand(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %b)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %b)
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} nested monitor enter of %a in 'hand_over_hand' elided
define void @hand_over_hand(ptr %a, ptr %b) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; The first inner enter's count matches two exits, the second of which
; belongs to a later acquisition: that pairing is refused and the first
; re-entry kept; the later one, paired alone, goes.
; CHECK-LABEL: define void @reacquired(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} nested monitor enter of %a in 'reacquired' kept: eliding it would leave an exit without its enter (at call void @jitlock.monitor.elided.exit(ptr %a))
; REMARK: remark: {{.*}} nested monitor enter of %a in 'reacquired' elided
define void @reacquired(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Paths that disagree on what is held: nothing is elided.
; CHECK-LABEL: define void @unstructured(
; CHECK-NOT:     elided
; CHECK:         ret void
; REMARK: remark: {{.*}} nested monitor enter of %a in 'unstructured' kept: the function's monitors are not known on every path (at call void @jitlock.monitor.exit(ptr %a))
define void @unstructured(ptr %a, i1 %c) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  br i1 %c, label %early, label %join

early:
  call void @jitlock.monitor.exit(ptr %a)
  br label %join

join:
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}
