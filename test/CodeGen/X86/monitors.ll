; REQUIRES: x86-registered-target
; The monitor storage on x86_64 (llc -O2). Only the monitor paths (M1, N2)
; differ from fast-paths.ll:
;  - index: the monitor base is one load from the thread, and the owner and
;    recursion words are addressed as base + scaled index (llc folds the
;    shift and the stride into shifts, masks and lea), the CAS on
;    owner 0 -> thread one `lock cmpxchgq` there, the exit's store of 0 and
;    its load of the entry count plain moves there;
;  - table: one compare of obj with each probed cache entry's object, from
;    the thread, and the hit's monitor loaded from the word after it; a miss
;    goes to the enter's slow call.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=index;exit=store>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefix=INDEX
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table;exit=store>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefix=TABLE

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

; INDEX-LABEL: counter:
; INDEX:         addq %fs:0, %[[THR:[a-z0-9]+]]
; The fast lock is unchanged: one CAS on the header.
; INDEX:         lock cmpxchgq %{{[a-z0-9]+}}, (%rdi)
; N1-N2: the exit's monitor from the index.
; INDEX:       # %jitlock.exit.monitor
; INDEX-NEXT:    movq [[#BASE:]](%[[THR]]), %[[XB:[a-z0-9]+]]
; INDEX:         movq 64(%[[XB]],%[[XI:[a-z0-9]+]]), %{{[a-z0-9]+}}
; INDEX:       # %jitlock.exit.owned
; INDEX-NEXT:    movq 72(%[[XB]],%[[XI]]), %{{[a-z0-9]+}}
; N3: store 0 to the owner at base + index, then the entry count there.
; INDEX:       # %jitlock.exit.release
; INDEX-NEXT:    movq $0, 64(%[[XB]],%[[XI]])
; INDEX-NEXT:    #MEMBARRIER
; INDEX-NEXT:    movl 80(%[[XB]],%[[XI]]), %{{[a-z0-9]+}}
; M1: exactly 10, then the monitor from the index, its owner tested, then
; CASed 0 -> thread.
; INDEX:       # %jitlock.enter.inflated
; INDEX:         cmpl $2, %{{[a-z0-9]+}}
; INDEX-NEXT:    jne [[SLOW:\.LBB[0-9_]+]]
; INDEX-NEXT:  # %jitlock.enter.monitor
; INDEX-NEXT:    movq [[#BASE]](%[[THR]]), %[[MB:[a-z0-9]+]]
; INDEX:         movq 64(%[[MB]],%[[MI:[a-z0-9]+]]), %rax
; INDEX-NEXT:    testq %rax, %rax
; INDEX-NEXT:    jne
; INDEX-NEXT:  # %jitlock.enter.monitor.cas
; INDEX-NEXT:    lock cmpxchgq %[[THR]], 64(%[[MB]],%[[MI]])
; INDEX:       [[SLOW]]: # %jitlock.enter.slow
; INDEX:         callq jitlock_rt_monitor_enter_slow@PLT
; M2: the recursion count at base + index + 72.
; INDEX:       # %jitlock.enter.monitor.recursive
; INDEX-NEXT:    incq 72(%[[MB]],%[[MI]])
; INDEX-NEXT:    jmp

; TABLE-LABEL: counter:
; TABLE:         addq %fs:0, %[[THR:[a-z0-9]+]]
; TABLE:         lock cmpxchgq %{{[a-z0-9]+}}, (%rdi)
; N2: probe 0 of the cache; its hit loads the monitor after it.
; TABLE:       # %jitlock.exit.monitor
; TABLE:         movq [[#CACHE:]](%[[THR]]), %[[O:[a-z0-9]+]]
; TABLE:         cmpq %{{[a-z0-9]+}}, %[[O]]
; M1: the same probes, from the same cache.
; TABLE:       # %jitlock.enter.inflated
; TABLE:         cmpl $2, %{{[a-z0-9]+}}
; TABLE-NEXT:    jne [[SLOW:\.LBB[0-9_]+]]
; TABLE:         movq [[#CACHE]](%[[THR]]), %[[EO:[a-z0-9]+]]
; TABLE:         cmpq %{{[a-z0-9]+}}, %[[EO]]
; TABLE-NEXT:    je
; The exit's hit, then the enter's: each loads its monitor, then its owner.
; TABLE:       # %jitlock.exit.monitor.hit0
; TABLE-NEXT:    movq [[#CACHE+8]](%[[THR]]), %[[XM:[a-z0-9]+]]
; TABLE-NEXT:  # %jitlock.exit.monitor.found
; TABLE-NEXT:    movq 64(%[[XM]]), %{{[a-z0-9]+}}
; TABLE:         movq $0, 64(%[[XM]])
; TABLE-NEXT:    #MEMBARRIER
; TABLE-NEXT:    movl 80(%[[XM]]), %{{[a-z0-9]+}}
; TABLE:       # %jitlock.enter.monitor.hit0
; TABLE-NEXT:    movq [[#CACHE+8]](%[[THR]]), %[[M:[a-z0-9]+]]
; TABLE-NEXT:  # %jitlock.enter.monitor.found
; TABLE-NEXT:    movq 64(%[[M]]), %rax
; TABLE-NEXT:    testq %rax, %rax
; TABLE-NEXT:    jne
; TABLE:         lock cmpxchgq %[[THR]], 64(%[[M]])
; TABLE:       [[SLOW]]: # %jitlock.enter.slow
; TABLE:         callq jitlock_rt_monitor_enter_slow@PLT
