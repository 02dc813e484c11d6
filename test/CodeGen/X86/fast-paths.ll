; REQUIRES: x86-registered-target
; The x86_64 code of the inline fast paths, through llc -O2:
;  - unlocked -> fast-locked (entry: E1 and E2's full test, E3 header, E4
;    top, E5 cas, push) has exactly one atomic RMW, a `lock cmpxchgq` on the
;    header, and no call;
;  - recursive re-entry (top -> push) has no atomic at all;
;  - fast unlock (X1, pop, X4 unlock + cas) has one `lock cmpxchgq`, and the
;    recursive unlock (pop -> done) none;
;  - the inflated unlock (N1-N3, exit=store) has none either: a plain store
;    of 0 to the owner word, then a load of the entry count;
;  - the runtime calls are out of line, after the fast path's ret;
;  - in tls mode the thread pointer is read by one instruction (%fs:0);
;    llc may address the lock-stack top through %fs as well.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;exit=store>' %s -o %t.bc
; RUN: llc -O2 -mtriple=x86_64-linux-gnu %t.bc -o - | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @fast_enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @fast_exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @counter(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: fast_enter:
; CHECK:       # %entry
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; The thread: one read of the thread pointer, once.
; CHECK:       {{(add|mov)q}} %fs:0, %[[THR:[a-z0-9]+]]
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]|%fs:0}}
; E1: load the header. E2: the full lock stack test comes before the
; header's bits are tested (the top is thread+0, %fs:-320).
; CHECK:       movq (%[[OBJ:[a-z0-9]+]]), %[[H:[a-z0-9]+]]
; CHECK-NEXT:  movl %fs:-320, %[[TOP:[a-z0-9]+]]
; CHECK-NEXT:  cmpl $127, %[[TOP]]
; CHECK-NEXT:  ja [[SLOW:\.LBB[0-9_]+]]
; E3: bit 1.
; CHECK-NEXT:  # %jitlock.enter.header
; CHECK-NEXT:  testb $2, %{{[a-z0-9]+}}
; CHECK-NEXT:  jne [[INFLATED:\.LBB[0-9_]+]]
; E4: a recursive enter jumps straight to the push.
; CHECK-NEXT:  # %jitlock.enter.top
; CHECK-NEXT:  movq -8(%[[THR]],%r[[TOP64:[a-z0-9]+]]), %[[PREV:[a-z0-9]+]]
; CHECK-NEXT:  cmpq %[[OBJ]], %[[PREV]]
; CHECK-NEXT:  je [[PUSH:\.LBB[0-9_]+]]
; E5: the one atomic.
; CHECK-NEXT:  # %jitlock.enter.cas
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       lock cmpxchgq %{{[a-z0-9]+}}, (%[[OBJ]])
; CHECK-NEXT:  jne [[SLOW]]
; CHECK-NEXT:  [[PUSH]]: # %jitlock.enter.push
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       movl %{{[a-z0-9]+}}, (%[[THR]])
; CHECK-NEXT:  retq
; Out of line, after the ret: M1-M2 and the slow call. M1 tests the owner
; word first; only a free monitor (0, already in rax) is CASed. M2's
; increment needs no atomic and no call.
; CHECK:       [[INFLATED]]: # %jitlock.enter.inflated
; CHECK:       # %jitlock.enter.monitor
; CHECK-NEXT:  movq 62(%[[MON:[a-z0-9]+]]), %rax
; CHECK-NEXT:  testq %rax, %rax
; CHECK-NEXT:  jne [[OWNED:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.enter.monitor.cas
; CHECK-NEXT:  lock cmpxchgq %[[THR]], 62(%[[MON]])
; CHECK-NEXT:  jne [[SLOW]]
; CHECK:       [[OWNED]]: # %jitlock.enter.owned
; CHECK-NEXT:  cmpq %[[THR]], %rax
; CHECK-NEXT:  jne [[SLOW]]
; CHECK-NEXT:  # %jitlock.enter.monitor.recursive
; CHECK-NEXT:  incq 70(%[[MON]])
; CHECK-NEXT:  retq
; CHECK:       [[SLOW]]: # %jitlock.enter.slow
; CHECK-NOT:   retq
; CHECK:       callq jitlock_rt_monitor_enter_slow@PLT
; CHECK-NOT:   %fs
; CHECK:       .Lfunc_end0:

; CHECK-LABEL: fast_exit:
; CHECK:       # %entry
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       {{(add|mov)q}} %fs:0, %[[THR:[a-z0-9]+]]
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]|%fs:0}}
; X1.
; CHECK:       jne [[INFLATED:\.LBB[0-9_]+]]
; X2-X3: a recursive exit is the pop alone.
; CHECK-NEXT:  # %jitlock.exit.pop
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       je [[DONE:\.LBB[0-9_]+]]
; X4.
; CHECK-NEXT:  # %jitlock.exit.unlock
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       jne [[RESTORE:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.exit.cas
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       lock cmpxchgq %{{[a-z0-9]+}}, (%{{[a-z0-9]+}})
; CHECK-NEXT:  jne [[RESTORE]]
; CHECK-NEXT:  [[DONE]]: # %jitlock.exit.done
; With two runtime calls in the function, llc aligns the stack for them at
; the entry of this tiny leaf: a push and a pop around the whole body.
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       retq
; CHECK-NEXT:  [[RESTORE]]: # %jitlock.exit.restore
; CHECK:       [[SLOW:\.LBB[0-9_]+]]: # %jitlock.exit.slow
; CHECK:       callq jitlock_rt_monitor_exit_slow@PLT
; CHECK:       [[INFLATED]]: # %jitlock.exit.inflated
; N2: the owner word is this thread, or the runtime.
; CHECK:       # %jitlock.exit.monitor
; CHECK-NEXT:  movq 62(%[[MON:[a-z0-9]+]]), %[[OWNER:[a-z0-9]+]]
; CHECK-NEXT:  cmpq %[[THR]], %[[OWNER]]
; CHECK-NEXT:  jne [[SLOW]]
; CHECK-NEXT:  # %jitlock.exit.owned
; CHECK-NEXT:  movq 70(%[[MON]]), %[[REC:[a-z0-9]+]]
; CHECK-NEXT:  testq %[[REC]], %[[REC]]
; CHECK-NEXT:  jne [[RECURSIVE:\.LBB[0-9_]+]]
; N3: a plain store of 0 (an x86 store is a release), no lock prefix and no
; fence instruction (the single-thread fence is only llc's comment), then the
; entry count: zero, done.
; CHECK-NEXT:  # %jitlock.exit.release
; CHECK-NEXT:  movq $0, 62(%[[MON]])
; CHECK-NEXT:  #MEMBARRIER
; CHECK-NEXT:  movl 78(%[[MON]]), %[[COUNT:[a-z0-9]+]]
; CHECK-NEXT:  testl %[[COUNT]], %[[COUNT]]
; CHECK-NEXT:  je [[DONE]]
; CHECK-NEXT:  # %jitlock.exit.queued
; CHECK:       callq jitlock_rt_monitor_exit_queued_slow@PLT
; N2, recursive: recursions -= 1 with a plain store; no atomic, no call.
; CHECK:       [[RECURSIVE]]: # %jitlock.exit.monitor.recursive
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       decq %[[REC]]
; CHECK-NEXT:  movq %[[REC]], 70(%[[MON]])
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       retq
; CHECK:       .Lfunc_end1:

; The whole counter: from the entry to the first ret there are exactly two
; atomics (enter's and exit's CAS), the increment, and no call.
; CHECK-LABEL: counter:
; CHECK:       # %entry
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       # %jitlock.enter.cas
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       lock cmpxchgq
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       # %jitlock.enter.done
; CHECK-NEXT:  incl (%rsi)
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       # %jitlock.exit.cas
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       lock cmpxchgq
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       # %jitlock.exit.done
; CHECK-NOT:   {{[[:blank:]](lock|callq)[[:blank:]]}}
; CHECK:       retq
; CHECK:       callq jitlock_rt_monitor_{{enter|exit}}_slow@PLT
; CHECK:       .Lfunc_end2:
