; Where the monitors cannot be known, a deopt point is an error naming it,
; never a guess: paths that hold different monitors (other objects, or the
; same ones in another order, or another SSA value on each path), an exit
; on one path only, and a loop that takes one more each time around.
; (opt stops at the first error, so each case is a module of its own.)
;
; RUN: rm -rf %t && split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-deopt-state -disable-output %t/disagree.ll 2>&1 \
; RUN:   | FileCheck %t/disagree.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-deopt-state -disable-output %t/order.ll 2>&1 \
; RUN:   | FileCheck %t/order.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-deopt-state -disable-output %t/loop.ll 2>&1 \
; RUN:   | FileCheck %t/loop.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-deopt-state -disable-output %t/exit_on_one_path.ll 2>&1 \
; RUN:   | FileCheck %t/exit_on_one_path.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-deopt-state -disable-output %t/phi_objects.ll 2>&1 \
; RUN:   | FileCheck %t/phi_objects.ll
; The same from jitlock-lower, which runs jitlock-deopt-state first.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -disable-output %t/disagree.ll 2>&1 \
; RUN:   | FileCheck %t/disagree.ll

;--- disagree.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

; CHECK: error: jitlock: in function 'disagree': the monitors held at this deopt point cannot be known: the paths to it hold different monitors, or an exit on one of them has no enter (unstructured locking): {{ *}}call void @work() [ "deopt"(i32 1) ]
define void @disagree(ptr %a, ptr %b, i1 %c) {
entry:
  br i1 %c, label %left, label %right

left:
  call void @jitlock.monitor.enter(ptr %a)
  br label %join

right:
  call void @jitlock.monitor.enter(ptr %b)
  br label %join

join:
  call void @work() [ "deopt"(i32 1) ]
  ret void
}

;--- order.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

; Both objects on both paths, in different orders: the order is unknown.
; CHECK: error: jitlock: in function 'order': the monitors held at this deopt point cannot be known{{.*}}"deopt"(i32 2)
define void @order(ptr %a, ptr %b, i1 %c) {
entry:
  br i1 %c, label %ab, label %ba

ab:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  br label %join

ba:
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %a)
  br label %join

join:
  call void @work() [ "deopt"(i32 2) ]
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  ret void
}

;--- loop.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

; CHECK: error: jitlock: in function 'loop': the monitors held at this deopt point cannot be known{{.*}}"deopt"(i32 3)
define void @loop(ptr %a, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"(i32 3) ]
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

;--- exit_on_one_path.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

; The exit on one path only: afterwards unknown, before it still known.
; CHECK: error: jitlock: in function 'exit_on_one_path': the monitors held at this deopt point cannot be known{{.*}}"deopt"(i32 5)
define void @exit_on_one_path(ptr %a, i1 %c) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @work() [ "deopt"(i32 4) ]
  br i1 %c, label %release, label %join

release:
  call void @jitlock.monitor.exit(ptr %a)
  br label %join

join:
  call void @work() [ "deopt"(i32 5) ]
  ret void
}

;--- phi_objects.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

; The same object on both paths, but a different SSA value on each: the
; phi's operands do not reach the point.
; CHECK: error: jitlock: in function 'phi_objects': the monitors held at this deopt point cannot be known{{.*}}"deopt"(i32 6)
define void @phi_objects(ptr %a, ptr %b, i1 %c) {
entry:
  br i1 %c, label %left, label %right

left:
  %x = getelementptr i8, ptr %a, i64 16
  call void @jitlock.monitor.enter(ptr %x)
  br label %join

right:
  %y = getelementptr i8, ptr %b, i64 16
  call void @jitlock.monitor.enter(ptr %y)
  br label %join

join:
  %o = phi ptr [ %x, %left ], [ %y, %right ]
  call void @work() [ "deopt"(i32 6) ]
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
