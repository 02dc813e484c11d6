; jitlock-elide merges adjacent regions on one object: an exit, then an enter
; of the same object with nothing between them that may block, call out,
; poll or deoptimize, lose both. Each shape that must not merge keeps its
; calls, with a missed remark saying why.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<coarsen-limit=12>' -pass-remarks=jitlock \
; RUN:   -pass-remarks-missed=jitlock -S %s -o - 2>%t.remarks | FileCheck %s
; RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
; coarsen-limit=0 turns coarsening off.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<coarsen-limit=0>' -S %s \
; RUN:   | FileCheck %s --check-prefix=OFF
; OFF-NOT: LockCoarsened
; OFF-LABEL: define void @adjacent(
; OFF-COUNT-2: call void @jitlock.monitor.exit(ptr %a)
; The default limit (64) merges the long chain too.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-elide \
; RUN:   -S %s | FileCheck %s --check-prefix=DEFAULT
; DEFAULT-LABEL: define void @over_limit(
; DEFAULT-COUNT-1: call void @jitlock.monitor.enter(ptr %a)
; DEFAULT-NOT: call void @jitlock.monitor.enter(ptr %a)
; DEFAULT: ret void
; Bad parameters get a diagnostic.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<coarsen-limit=many>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BAD
; BAD: coarsen-limit= needs a number of instructions, not 'many'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<coarsen-limit=12;allocators=new_object>' \
; RUN:   -disable-output %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()
declare void @work()
declare i64 @llvm.experimental.deoptimize.i64(...)
declare i64 @llvm.smax.i64(i64, i64)
declare void @deopt_point()

; Two regions back to back: one region.
; CHECK-LABEL: define void @adjacent(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    store i32 1, ptr %a
; CHECK-NEXT:    store i32 2, ptr %a
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; CHECK-NEXT:    ret void
; REMARK: remark: {{.*}} monitor regions of %a in 'adjacent' coarsened: the exit and the next enter merged, the region now spans 2 instructions
define void @adjacent(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  store i32 1, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  store i32 2, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; The gap may compute, load, store, call a non-blocking intrinsic, go
; through an unconditional branch into a block of its own and reach the
; object through a cast; three regions become one.
; CHECK-LABEL: define i64 @chain(
; CHECK:         call void @jitlock.monitor.enter(ptr %a)
; CHECK-NOT:     call void @jitlock.monitor
; CHECK:         call void @jitlock.monitor.exit(ptr %a)
; CHECK-NEXT:    ret i64
; REMARK: remark: {{.*}} monitor regions of %a in 'chain' coarsened: {{.*}} spans 3 instructions
; REMARK: remark: {{.*}} monitor regions of %a in 'chain' coarsened: {{.*}} spans 5 instructions
define i64 @chain(ptr %a, i64 %x) {
entry:
  %a.cast = getelementptr i8, ptr %a, i64 0
  call void @jitlock.monitor.enter(ptr %a)
  %v = load i64, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  %m = call i64 @llvm.smax.i64(i64 %v, i64 %x)
  br label %next

next:
  call void @jitlock.monitor.enter(ptr %a.cast)
  store i64 %m, ptr %a
  call void @jitlock.monitor.exit(ptr %a.cast)
  call void @jitlock.monitor.enter(ptr %a)
  %w = load i64, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %w
}

; A call between the regions may block: kept.
; CHECK-LABEL: define void @call_between(
; CHECK-COUNT-2: call void @jitlock.monitor.enter(ptr %a)
; REMARK: remark: {{.*}} monitor regions of %a in 'call_between' not coarsened: a call that may block is between them (at call void @work())
define void @call_between(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @work()
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; A safepoint poll between them: kept, so that the poll still runs with the
; lock free.
; CHECK-LABEL: define void @poll_between(
; CHECK-COUNT-2: call void @jitlock.monitor.enter(ptr %a)
; REMARK: remark: {{.*}} monitor regions of %a in 'poll_between' not coarsened: a safepoint poll is between them (at call void @jitlock.safepoint.poll())
define void @poll_between(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.safepoint.poll()
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; A deopt point between them: kept, so that its state (no hold of %a) stays
; what the interpreter expects there.
; CHECK-LABEL: define void @deopt_between(
; CHECK-COUNT-2: call void @jitlock.monitor.enter(ptr %a)
; REMARK: remark: {{.*}} monitor regions of %a in 'deopt_between' not coarsened: a deopt point is between them (at call void @deopt_point() [ "deopt"(i32 0) ])
define void @deopt_between(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @deopt_point() [ "deopt"(i32 0) ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; A region in a loop: its exit and the next iteration's enter are a
; back-edge apart, never merged.
; CHECK-LABEL: define void @back_edge(
; CHECK:       loop:
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    store i32 0, ptr %a
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} monitor regions of %a in 'back_edge' not coarsened: a loop back-edge is between them (at br label %loop)
define void @back_edge(ptr %a) {
entry:
  br label %loop

loop:
  call void @jitlock.monitor.enter(ptr %a)
  store i32 0, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  br label %loop
}

; Another path reaches the second enter without the first region: kept.
; CHECK-LABEL: define void @join(
; CHECK-COUNT-2: call void @jitlock.monitor.enter(ptr %a)
; REMARK: remark: {{.*}} monitor regions of %a in 'join' not coarsened: another path joins between them (at br label %second)
define void @join(ptr %a, i1 %c) {
entry:
  br i1 %c, label %first, label %second

first:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  br label %second

second:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Each region has 5 instructions; the first two merge into 11 (5, the
; store between, 5); the third would make it 16, past the limit of 12.
; CHECK-LABEL: define void @over_limit(
; CHECK-COUNT-2: call void @jitlock.monitor.enter(ptr %a)
; CHECK-NOT:     call void @jitlock.monitor.enter(ptr %a)
; CHECK:         ret void
; REMARK: remark: {{.*}} monitor regions of %a in 'over_limit' coarsened: {{.*}} spans 11 instructions
; REMARK: remark: {{.*}} monitor regions of %a in 'over_limit' not coarsened: the merged region would exceed the coarsening limit of 12 instructions
define void @over_limit(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  store volatile i32 1, ptr %a
  store volatile i32 2, ptr %a
  store volatile i32 3, ptr %a
  store volatile i32 4, ptr %a
  store volatile i32 5, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  store volatile i32 6, ptr %a
  call void @jitlock.monitor.enter(ptr %a)
  store volatile i32 7, ptr %a
  store volatile i32 8, ptr %a
  store volatile i32 9, ptr %a
  store volatile i32 10, ptr %a
  store volatile i32 11, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  store volatile i32 12, ptr %a
  store volatile i32 13, ptr %a
  store volatile i32 14, ptr %a
  store volatile i32 15, ptr %a
  store volatile i32 16, ptr %a
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Regions on different objects stay apart.
; No enter of %a follows: no remark either.
; REMARK-NOT: 'different_objects'
; CHECK-LABEL: define void @different_objects(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %b)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %b)
define void @different_objects(ptr %a, ptr %b) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.exit(ptr %b)
  ret void
}
