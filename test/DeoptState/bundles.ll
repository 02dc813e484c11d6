; jitlock-deopt-state appends the frame's monitors to each "deopt" bundle,
; after the frontend's operands: the marker 0x4a4c4d31 (1246514481), the
; count, then (object, kind) pairs outermost first, kind 0 held and 1
; elided. jitlock-elide runs first, as at O2, and its markers are gone
; afterwards.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide,jitlock-deopt-state' -S %s | FileCheck %s
; Describing twice adds nothing: a bundle that ends with a group keeps it.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide,jitlock-deopt-state,jitlock-deopt-state' -S %s \
; RUN:   | FileCheck %s
; jitlock-lower describes the held monitors (no elision there).
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s | FileCheck %s --check-prefix=LOWER

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare noalias ptr @new_object(i64)
declare void @work()
declare i64 @value()
declare i32 @personality(...)
declare void @llvm.experimental.deoptimize.isVoid(...)

; CHECK-NOT: jitlock.monitor.elided

; CHECK-LABEL: define void @no_monitors(
; CHECK-NEXT:    call void @work() [ "deopt"(i32 7, i64 %x, i32 1246514481, i32 0), "other"(i64 %x) ]
; CHECK-NEXT:    call void @work() [ "deopt"(i32 1246514481, i32 0) ]
define void @no_monitors(i64 %x) {
  call void @work() [ "deopt"(i32 7, i64 %x), "other"(i64 %x) ]
  call void @work() [ "deopt"() ]
  ret void
}

; CHECK-LABEL: define void @held(
; CHECK:         call void @work() [ "deopt"(i64 %x, i32 1246514481, i32 1, ptr %a, i32 0) ]
; CHECK:         call void @work() [ "deopt"(i64 %x, i32 1246514481, i32 0) ]
; LOWER-LABEL: define void @held(
; LOWER:         call void @work() [ "deopt"(i64 %x, i32 1246514481, i32 1, ptr %a, i32 0) ]
; LOWER:         call void @work() [ "deopt"(i64 %x, i32 1246514481, i32 0) ]
define void @held(ptr %a, i64 %x) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"(i64 %x) ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @work() [ "deopt"(i64 %x) ]
  ret void
}

; The call keeps its attributes, calling convention, metadata and name.
; CHECK-LABEL: define i64 @elided_temporary(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    %v = call fastcc i64 @value() #[[ATTRS:[0-9]+]] [ "deopt"(i32 1, i32 1246514481, i32 1, ptr %t, i32 1) ], !prof ![[PROF:[0-9]+]]
; CHECK-NEXT:    ret i64 %v
; LOWER-LABEL: define i64 @elided_temporary(
; LOWER:         %v = call fastcc i64 @value() #{{[0-9]+}} [ "deopt"(i32 1, i32 1246514481, i32 1, ptr %t, i32 0) ]
define i64 @elided_temporary() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %v = call fastcc i64 @value() #0 [ "deopt"(i32 1) ], !prof !0
  call void @jitlock.monitor.exit(ptr %t)
  ret i64 %v
}

; An elided temporary inside a kept lock, and a kept lock inside one.
; CHECK-LABEL: define void @elided_inside_held(
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 2, ptr %a, i32 0, ptr %t, i32 1) ]
; CHECK-LABEL: define void @held_inside_elided(
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 2, ptr %t, i32 1, ptr %a, i32 0) ]
define void @elided_inside_held(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define void @held_inside_elided(ptr %a) {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; Recursion: one pair per acquisition, the nested one elided.
; CHECK-LABEL: define void @recursive(
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 1, ptr %a, i32 0) ]
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 3, ptr %a, i32 0, ptr %a, i32 1, ptr %a, i32 1) ]
; LOWER-LABEL: define void @recursive(
; LOWER:         call void @work() [ "deopt"(i32 1246514481, i32 3, ptr %a, i32 0, ptr %a, i32 0, ptr %a, i32 0) ]
define void @recursive(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Nine monitors, more than the lock stack holds.
; CHECK-LABEL: define void @nine(
; CHECK:         call void @work() [ "deopt"(i64 0, i32 1246514481, i32 9, ptr %o1, i32 0, ptr %o2, i32 0, ptr %o3, i32 0, ptr %o4, i32 0, ptr %o5, i32 0, ptr %o6, i32 0, ptr %o7, i32 0, ptr %o8, i32 0, ptr %o9, i32 0) ]
define void @nine(ptr %o1, ptr %o2, ptr %o3, ptr %o4, ptr %o5, ptr %o6,
                  ptr %o7, ptr %o8, ptr %o9) {
  call void @jitlock.monitor.enter(ptr %o1)
  call void @jitlock.monitor.enter(ptr %o2)
  call void @jitlock.monitor.enter(ptr %o3)
  call void @jitlock.monitor.enter(ptr %o4)
  call void @jitlock.monitor.enter(ptr %o5)
  call void @jitlock.monitor.enter(ptr %o6)
  call void @jitlock.monitor.enter(ptr %o7)
  call void @jitlock.monitor.enter(ptr %o8)
  call void @jitlock.monitor.enter(ptr %o9)
  call void @work() [ "deopt"(i64 0) ]
  call void @jitlock.monitor.exit(ptr %o9)
  call void @jitlock.monitor.exit(ptr %o8)
  call void @jitlock.monitor.exit(ptr %o7)
  call void @jitlock.monitor.exit(ptr %o6)
  call void @jitlock.monitor.exit(ptr %o5)
  call void @jitlock.monitor.exit(ptr %o4)
  call void @jitlock.monitor.exit(ptr %o3)
  call void @jitlock.monitor.exit(ptr %o2)
  call void @jitlock.monitor.exit(ptr %o1)
  ret void
}

; Hand over hand: acquisition order, not nesting, decides.
; CHECK-LABEL: define void @hand_over_hand(
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 2, ptr %b, i32 0, ptr %c, i32 0) ]
define void @hand_over_hand(ptr %a, ptr %b, ptr %c) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %c)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %c)
  ret void
}

; An invoke stays an invoke; paths that agree meet; the deoptimize
; intrinsic is a deopt point like any other (the frame does not return
; there, so the temporary's lock is elided all the same).
; CHECK-LABEL: define void @invoke_and_deoptimize(
; CHECK:         invoke void @work() [ "deopt"(i32 1246514481, i32 2, ptr %a, i32 0, ptr %t, i32 1) ]
; CHECK-NEXT:            to label %ok unwind label %handler
; CHECK:       slow:
; CHECK-NEXT:    call void (...) @llvm.experimental.deoptimize.isVoid(i32 5) [ "deopt"(i32 9, i32 1246514481, i32 2, ptr %a, i32 0, ptr %t, i32 1) ]
; CHECK:       handler:
; CHECK:         call void @work() [ "deopt"(i32 1246514481, i32 1, ptr %a, i32 0) ]
define void @invoke_and_deoptimize(ptr %a, i1 %c) personality ptr @personality {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  br i1 %c, label %fast, label %other

other:
  br label %fast

fast:
  invoke void @work() [ "deopt"() ] to label %ok unwind label %handler

ok:
  br i1 %c, label %slow, label %done

slow:
  call void (...) @llvm.experimental.deoptimize.isVoid(i32 5) [ "deopt"(i32 9) ]
  ret void

done:
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  ret void

handler:
  %lp = landingpad { ptr, i32 } cleanup
  call void @jitlock.monitor.exit(ptr %t)
  call void @work() [ "deopt"() ]
  call void @jitlock.monitor.exit(ptr %a)
  resume { ptr, i32 } %lp
}

attributes #0 = { noinline }
!0 = !{!"branch_weights", i32 1}
; CHECK: attributes #[[ATTRS]] = { noinline }
; CHECK: ![[PROF]] = !{!"branch_weights", i32 1}
