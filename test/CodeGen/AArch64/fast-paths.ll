; REQUIRES: aarch64-registered-target
; The AArch64 code of the inline fast paths, through llc -O2, with LSE
; (-mattr=+lse: one `casa`/`casl`) and without (an exclusive-load/store
; loop: `ldaxr`/`stxr` for the acquire CAS, `ldxr`/`stlxr` for the release
; CAS):
;  - unlocked -> fast-locked has exactly one atomic RMW sequence, no call;
;  - recursive re-entry (top -> push) has none;
;  - fast unlock has one, the recursive unlock none;
;  - the runtime calls are out of line, after the fast path's ret;
;  - in tls mode the thread pointer is one `mrs xN, TPIDR_EL0`.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;exit=store>' %s -o %t.bc
; RUN: llc -O2 -mtriple=aarch64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=CHECK,LLSC
; RUN: llc -O2 -mtriple=aarch64-linux-gnu -mattr=+lse %t.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=CHECK,LSE
;
; N3's single-thread fence (exit=store) emits no instruction: only llc's
; comment stands between the release store and the entry count's load.
; RUN: llc -O2 -mtriple=aarch64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=RELEASE
; RELEASE-LABEL: fast_exit:
; RELEASE:       stlr xzr, {{\[}}x{{[0-9]+}}]
; RELEASE-NEXT:  //MEMBARRIER
; RELEASE-NEXT:  ldur w{{[0-9]+}}, {{\[}}x{{[0-9]+}}, #78]

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

; An atomic instruction or a call, as a pattern:
;   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}

; CHECK-LABEL: fast_enter:
; CHECK:       // %entry
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       mrs [[TP:x[0-9]+]], TPIDR_EL0
; CHECK-NOT:   TPIDR_EL0
; CHECK:       sub [[THR:x[0-9]+]], [[TP]], #320
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; E1, then E2: the full test comes before the header's bits are tested.
; CHECK:       ldr [[H:x[0-9]+]], {{\[}}[[OBJ:x[0-9]+]]]
; CHECK-NEXT:  ldr [[TOP:w[0-9]+]], {{\[}}[[THR]]]
; CHECK-NEXT:  cmp [[TOP]], #127
; CHECK-NEXT:  b.hi [[SLOW:\.LBB[0-9_]+]]
; E3.
; CHECK-NEXT:  // %jitlock.enter.header
; CHECK-NEXT:  tbnz {{w[0-9]+}}, #1, [[INFLATED:\.LBB[0-9_]+]]
; E4: recursion goes straight to the push.
; CHECK-NEXT:  // %jitlock.enter.top
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       b.eq [[PUSH:\.LBB[0-9_]+]]
; E5: the one atomic.
; CHECK-NEXT:  // %jitlock.enter.cas
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; LSE:         casa [[SEEN:x[0-9]+]], {{x[0-9]+}}, {{\[}}[[OBJ]]]
; LSE-NEXT:    cmp [[SEEN]], {{x[0-9]+}}
; LSE-NEXT:    b.ne [[SLOW]]
; LLSC:        [[RETRY:\.LBB[0-9_]+]]: // %cmpxchg.start
; LLSC:        ldaxr [[SEEN:x[0-9]+]], {{\[}}[[OBJ]]]
; LLSC-NEXT:   cmp [[SEEN]], {{x[0-9]+}}
; LLSC-NEXT:   b.ne [[NOSTORE:\.LBB[0-9_]+]]
; LLSC-NEXT:   // %cmpxchg.trystore
; LLSC:        stxr [[FAIL:w[0-9]+]], {{x[0-9]+}}, {{\[}}[[OBJ]]]
; LLSC-NEXT:   cbnz [[FAIL]], [[RETRY]]
; CHECK-NEXT:  [[PUSH]]: // %jitlock.enter.push
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       str {{x[0-9]+}}, {{\[}}[[THR]], {{x[0-9]+}}]
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       ret
; Out of line, after the ret (in an order that depends on the target
; features).
; (With LL/SC, E5's and M1's failed compares share one clrex block.)
; LLSC-DAG:    [[NOSTORE]]: // %{{cmpxchg.nostore|jitlock.enter.slow.sink.split}}
; CHECK-DAG:   [[SLOW]]: // %jitlock.enter.slow
; CHECK-DAG:   bl jitlock_rt_monitor_enter_slow
; CHECK-DAG:   [[INFLATED]]: // %jitlock.enter.inflated
; M1: test the owner word (a plain load); nonzero skips the CAS.
; CHECK-DAG:   ldur [[OWN:x[0-9]+]], {{\[}}[[MON:x[0-9]+]], #62]
; CHECK-DAG:   cbnz [[OWN]], [[OWNED:\.LBB[0-9_]+]]
; M1: the owner CAS stores the thread.
; LSE-DAG:     casa {{x[0-9]+}}, [[THR]], {{\[}}{{x[0-9]+}}]
; LLSC-DAG:    stxr {{w[0-9]+}}, [[THR]], {{\[}}{{x[0-9]+}}]
; M2: owner == thread: recursions += 1, plain ldur/add/stur.
; CHECK-DAG:   [[OWNED]]: // %jitlock.enter.owned
; CHECK-DAG:   cmp [[OWN]], [[THR]]
; CHECK-DAG:   // %jitlock.enter.monitor.recursive
; CHECK-DAG:   ldur [[REC:x[0-9]+]], {{\[}}[[MON]], #70]
; CHECK-DAG:   add [[REC]], [[REC]], #1
; CHECK-DAG:   stur [[REC]], {{\[}}[[MON]], #70]
; CHECK-NOT:   TPIDR_EL0
; CHECK:       .Lfunc_end0:

; CHECK-LABEL: fast_exit:
; CHECK:       // %entry
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       mrs {{x[0-9]+}}, TPIDR_EL0
; CHECK-NOT:   {{TPIDR_EL0|[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; X1.
; CHECK:       b.ne [[INFLATED:\.LBB[0-9_]+]]
; X2-X3: the recursive exit is the pop alone.
; CHECK-NEXT:  // %jitlock.exit.pop
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       b.eq [[DONE:\.LBB[0-9_]+]]
; X4.
; CHECK-NEXT:  // %jitlock.exit.unlock
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       b.ne [[RESTORE:\.LBB[0-9_]+]]
; CHECK-NEXT:  // %jitlock.exit.cas
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; LSE:         casl [[SEEN:x[0-9]+]], {{x[0-9]+}}, {{\[}}[[OBJ:x[0-9]+]]]
; LSE-NEXT:    cmp [[SEEN]], {{x[0-9]+}}
; LSE-NEXT:    b.ne [[RESTORE]]
; LLSC:        [[RETRY:\.LBB[0-9_]+]]: // %cmpxchg.start
; LLSC:        ldxr [[SEEN:x[0-9]+]], {{\[}}[[OBJ:x[0-9]+]]]
; LLSC-NEXT:   cmp [[SEEN]], {{x[0-9]+}}
; LLSC-NEXT:   b.ne [[NOSTORE:\.LBB[0-9_]+]]
; LLSC-NEXT:   // %cmpxchg.trystore
; LLSC:        stlxr [[FAIL:w[0-9]+]], {{x[0-9]+}}, {{\[}}[[OBJ]]]
; LLSC-NEXT:   cbnz [[FAIL]], [[RETRY]]
; CHECK-NEXT:  [[DONE]]: // %jitlock.exit.done
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       ret
; LLSC-DAG:    [[NOSTORE]]: // %cmpxchg.nostore
; CHECK-DAG:   [[RESTORE]]: // %jitlock.exit.restore
; CHECK-DAG:   // %jitlock.exit.slow
; CHECK-DAG:   bl jitlock_rt_monitor_exit_slow
; CHECK-DAG:   [[INFLATED]]: // %jitlock.exit.inflated
; N2: the owner word, then the recursion count; a count goes out of line.
; CHECK-DAG:   // %jitlock.exit.owned
; CHECK-DAG:   ldur [[REC:x[0-9]+]], {{\[}}[[MON:x[0-9]+]], #70]
; CHECK-DAG:   cbnz [[REC]], [[RECURSIVE:\.LBB[0-9_]+]]
; N3: a release store of zero, no barrier, then the entry count: no
; exclusive pair and no CAS, with LSE or without.
; CHECK-DAG:   // %jitlock.exit.release
; CHECK-DAG:   stlr xzr, {{\[}}[[OWNERADDR:x[0-9]+]]]
; CHECK-DAG:   ldur [[COUNT:w[0-9]+]], {{\[}}[[MON]], #78]
; CHECK-DAG:   cbz [[COUNT]], [[DONE]]
; CHECK-DAG:   bl jitlock_rt_monitor_exit_queued_slow
; N2, recursive: recursions - 1, a plain store.
; CHECK-DAG:   [[RECURSIVE]]: // %jitlock.exit.monitor.recursive
; CHECK-DAG:   sub [[NEXT:x[0-9]+]], [[REC]], #1
; CHECK-DAG:   stur [[NEXT]], {{\[}}[[MON]], #70]
; CHECK-NOT:   TPIDR_EL0
; CHECK:       .Lfunc_end1:

; The whole counter: entry to the first ret has two atomic sequences and no
; call.
; CHECK-LABEL: counter:
; CHECK:       // %entry
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       // %jitlock.enter.cas
; CHECK-NOT:   {{[[:blank:]](ldxr|stlxr|casl?|bl)[[:blank:]]}}
; LSE:         casa
; LLSC:        ldaxr
; LLSC:        stxr
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       // %jitlock.enter.done
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       // %jitlock.exit.cas
; CHECK-NOT:   {{[[:blank:]](ldaxr|stxr|casa?|bl)[[:blank:]]}}
; LSE:         casl
; LLSC:        ldxr
; LLSC:        stlxr
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       // %jitlock.exit.done
; CHECK-NOT:   {{[[:blank:]](ldaxr|ldxr|stxr|stlxr|casa?l?|bl)[[:blank:]]}}
; CHECK:       ret
; CHECK:       bl jitlock_rt_monitor_{{enter|exit}}_slow
; CHECK:       .Lfunc_end2:
