; REQUIRES: x86-registered-target
; locking=heavy on x86_64 (llc -O2): the enter tests that the lock stack is
; not full (E2, before anything else: a thread that is not attached has a
; full one), then the header for a monitor (exactly 10), tests its owner word
; (header + 62) and takes a free one with one `lock cmpxchgq`; it pushes
; nothing, and an object without a monitor goes to
; jitlock_rt_monitor_enter_slow, out of line. The exit's monitor path (N1-N3) is laid out inline, its
; lock-stack pop out of line.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=heavy;exit=store>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - > %t.s
; RUN: FileCheck %s < %t.s
; RUN: FileCheck %s --check-prefix=CALLS < %t.s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @counter(ptr %o, ptr %c) nounwind {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: counter:
; CHECK:         addq %fs:0, %[[THR:[a-z0-9]+]]
; CHECK-NEXT:    movq (%rdi), %[[H:[a-z0-9]+]]
; E2: the top is thread+0, %fs:-320.
; CHECK-NEXT:    movl %fs:-320, %[[TOP:[a-z0-9]+]]
; CHECK-NEXT:    cmpl $127, %[[TOP]]
; CHECK-NEXT:    ja [[SLOW:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.enter.header
; CHECK-NEXT:    movl %e[[H32:[a-z0-9]+]], %[[BITS:[a-z0-9]+]]
; CHECK-NEXT:    andl $3, %[[BITS]]
; CHECK-NEXT:    cmpl $2, %[[BITS]]
; CHECK-NEXT:    jne [[SLOW]]
; M1: test the owner word first; the CAS only for a free monitor, whose 0
; is already in rax. Owned (M2's check) goes out of line.
; CHECK-NEXT:  # %jitlock.enter.monitor
; CHECK-NEXT:    movq 62(%[[H]]), %rax
; CHECK-NEXT:    testq %rax, %rax
; CHECK-NEXT:    jne [[OWNED:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.enter.monitor.cas
; CHECK-NEXT:    lock cmpxchgq %[[THR]], 62(%[[H]])
; CHECK-NEXT:    jne [[SLOW]]
; CHECK-NEXT:  .LBB{{[0-9_]+}}: # %jitlock.enter.done
; CHECK-NEXT:    incl (%rsi)
; The exit: X1, then the monitor release inline (N2's owner test, N3's store
; of 0 and its load of the entry count); a recursion goes out of line.
; CHECK:         cmpq %rdi, %{{[a-z0-9]+}}
; CHECK-NEXT:    je
; CHECK-NEXT:  # %jitlock.exit.inflated
; CHECK:       # %jitlock.exit.monitor
; CHECK-NEXT:    movq 62(%[[IH:[a-z0-9]+]]), %[[OWNER:[a-z0-9]+]]
; CHECK-NEXT:    cmpq %[[THR]], %[[OWNER]]
; CHECK-NEXT:    jne
; CHECK-NEXT:  # %jitlock.exit.owned
; CHECK-NEXT:    movq 70(%[[IH]]), %[[REC:[a-z0-9]+]]
; CHECK-NEXT:    testq %[[REC]], %[[REC]]
; CHECK-NEXT:    jne [[EXITREC:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.exit.release
; CHECK-NEXT:    movq $0, 62(%[[IH]])
; CHECK-NEXT:    #MEMBARRIER
; CHECK-NEXT:    movl 78(%[[IH]]), %[[COUNT:[a-z0-9]+]]
; CHECK-NEXT:    testl %[[COUNT]], %[[COUNT]]
; CHECK:         retq
; Out of line, after the ret: M2 (owner == self: recursions += 1, no
; call), the enter's slow call, N2's recursive exit (recursions -= 1, a
; plain store, no call), the exit's runtime calls.
; CHECK:       [[OWNED]]: # %jitlock.enter.owned
; CHECK-NEXT:    cmpq %[[THR]], %rax
; CHECK-NEXT:    jne [[SLOW]]
; CHECK-NEXT:  # %jitlock.enter.monitor.recursive
; CHECK-NEXT:    incq 70(%[[H]])
; CHECK-NEXT:    jmp
; CHECK-NEXT:  [[SLOW]]: # %jitlock.enter.slow
; CHECK:         callq jitlock_rt_monitor_enter_slow@PLT
; CHECK:       [[EXITREC]]: # %jitlock.exit.monitor.recursive
; CHECK-NEXT:    decq %[[REC]]
; CHECK-NEXT:    movq %[[REC]], 70(%[[IH]])
; CHECK-NEXT:    jmp
; The exit's two runtime calls, wherever llc puts them.
; CALLS-DAG:     callq jitlock_rt_monitor_exit_slow@PLT
; CALLS-DAG:     callq jitlock_rt_monitor_exit_queued_slow@PLT
