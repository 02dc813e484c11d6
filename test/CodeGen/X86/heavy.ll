; REQUIRES: x86-registered-target
; locking=heavy on x86_64 (llc -O2): the enter tests the header for a
; monitor (exactly 10) and takes it with one `lock cmpxchgq` on its owner
; word (header + 62); it never touches the lock stack, and an object without
; a monitor goes to jitlock_rt_monitor_enter, out of line. The exit's
; monitor path (N1-N3) is laid out inline, its lock-stack pop out of line.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=heavy>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s

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
; CHECK-NEXT:    movl %e[[H32:[a-z0-9]+]], %[[BITS:[a-z0-9]+]]
; CHECK-NEXT:    andl $3, %[[BITS]]
; CHECK-NEXT:    cmpl $2, %[[BITS]]
; CHECK-NEXT:    jne [[SLOW:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.enter.monitor
; CHECK-NEXT:    xorl %eax, %eax
; CHECK-NEXT:    lock cmpxchgq %[[THR]], 62(%[[H]])
; CHECK-NEXT:    jne
; CHECK-NEXT:  # %jitlock.enter.done
; CHECK-NEXT:    incl (%rsi)
; The exit: X1, then the monitor release inline.
; CHECK:         cmpq %rdi, %{{[a-z0-9]+}}
; CHECK-NEXT:    je
; CHECK-NEXT:  # %jitlock.exit.inflated
; CHECK:       # %jitlock.exit.release
; CHECK:         lock cmpxchgq %{{[a-z0-9]+}}, 62(%{{[a-z0-9]+}})
; CHECK:         retq
; The enter's slow call comes after the ret.
; CHECK:       [[SLOW]]: # %jitlock.enter.slow
; CHECK:         callq jitlock_rt_monitor_enter@PLT
