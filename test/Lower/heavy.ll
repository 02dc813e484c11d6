; locking=heavy: the enter has no fast lock (E4-E5) and no lock-stack push.
; After the full-stack test (E2), a header that holds a monitor (exactly 10)
; takes the inline monitor path (M1: CAS owner 0 -> self; M2: recursion by
; the owner); every other state calls jitlock_rt_monitor_enter_slow, which
; inflates when the runtime runs in JITLOCK_LOCKING_HEAVY. The exit is the lightweight one, which handles every
; state, with its first branch weighted for a monitor. The mode comes from
; the locking= parameter, the jitlock.locking module flag (string), or the
; runtime's layout (lightweight by default); a parameter that disagrees with
; the flag is a conflicting configuration. The layout stamp does not record
; the mode: code lowered for either mode is correct on a runtime in either.
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=heavy>' -S %t/enter.ll \
; RUN:   | FileCheck %s --check-prefix=HEAVY
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/heavy-flag.ll \
; RUN:   | FileCheck %s --check-prefix=HEAVY
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=heavy>' -S %t/heavy-flag.ll \
; RUN:   | FileCheck %s --check-prefix=HEAVY
; The default and locking=lightweight are the fast lock of enter.ll.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/enter.ll \
; RUN:   | FileCheck %s --check-prefix=LIGHT
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=lightweight>' -S %t/enter.ll \
; RUN:   | FileCheck %s --check-prefix=LIGHT
; The same layout stamp in both modes.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=heavy>' -S %t/enter.ll | grep jitlock.lowered-layout > %t.heavy.stamp
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=lightweight>' -S %t/enter.ll | grep jitlock.lowered-layout > %t.light.stamp
; RUN: diff %t.heavy.stamp %t.light.stamp
; One remark per enter names the mode.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=heavy>' -pass-remarks=jitlock -disable-output %t/enter.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK
; Conflicts and bad values.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=lightweight>' -disable-output %t/heavy-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=biased>' -disable-output %t/enter.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BADPARAM
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/bad-flag.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG

; HEAVY-LABEL: define void @enter(ptr %o) {
; HEAVY-NEXT:  entry:
; HEAVY-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; HEAVY-NEXT:    %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; E1, then E2: a full lock stack goes to the runtime, unlikely. A thread
; that is not attached has one, and must not reach M1.
; HEAVY-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; HEAVY-NEXT:    %jitlock.top = load atomic i32, ptr %jitlock.thread monotonic, align 4
; HEAVY-NEXT:    %jitlock.stack.full = icmp uge i32 %jitlock.top, 128
; HEAVY-NEXT:    br i1 %jitlock.stack.full, label %jitlock.enter.slow, label %jitlock.enter.header, !prof [[UNLIKELY:![0-9]+]]
; HEAVY-EMPTY:
; Then M1's test: exactly 10, likely.
; HEAVY-NEXT:  jitlock.enter.header:
; HEAVY-NEXT:    [[BITS:%.*]] = and i64 %jitlock.header, 3
; HEAVY-NEXT:    %jitlock.is.monitor = icmp eq i64 [[BITS]], 2
; HEAVY-NEXT:    br i1 %jitlock.is.monitor, label %jitlock.enter.monitor, label %jitlock.enter.slow, !prof [[LIKELY:![0-9]+]]
; HEAVY-EMPTY:
; HEAVY-NEXT:  jitlock.enter.monitor:
; HEAVY-NEXT:    %jitlock.self = ptrtoint ptr %jitlock.thread to i64
; HEAVY-NEXT:    %jitlock.monitor.tagged = inttoptr i64 %jitlock.header to ptr
; HEAVY-NEXT:    %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor.tagged, i64 62
; M1 tests the owner word first (relaxed); only a free monitor is CASed.
; HEAVY-NEXT:    %jitlock.owner = load atomic i64, ptr %jitlock.owner.addr monotonic, align 8
; HEAVY-NEXT:    %jitlock.owner.is.free = icmp eq i64 %jitlock.owner, 0
; HEAVY-NEXT:    br i1 %jitlock.owner.is.free, label %jitlock.enter.monitor.cas, label %jitlock.enter.owned, !prof [[LIKELY]]
; HEAVY-EMPTY:
; HEAVY-NEXT:  jitlock.enter.monitor.cas:
; HEAVY-NEXT:    %jitlock.owner.cas = cmpxchg ptr %jitlock.owner.addr, i64 %jitlock.owner, i64 %jitlock.self acquire monotonic, align 8
; HEAVY-NEXT:    [[OWNED:%.*]] = extractvalue { i64, i1 } %jitlock.owner.cas, 1
; HEAVY-NEXT:    br i1 [[OWNED]], label %jitlock.enter.done, label %jitlock.enter.slow, !prof [[LIKELY]]
; HEAVY-EMPTY:
; HEAVY-NEXT:  jitlock.enter.owned:
; HEAVY-NEXT:    %jitlock.owner.is.self = icmp eq i64 %jitlock.owner, %jitlock.self
; HEAVY-NEXT:    br i1 %jitlock.owner.is.self, label %jitlock.enter.monitor.recursive, label %jitlock.enter.slow, !prof [[LIKELY]]
; HEAVY-EMPTY:
; HEAVY-NEXT:  jitlock.enter.monitor.recursive:
; HEAVY-NEXT:    %jitlock.monitor.tagged{{[0-9]+}} = inttoptr i64 %jitlock.header to ptr
; HEAVY-NEXT:    %jitlock.recursions.addr = getelementptr i8, ptr %jitlock.monitor.tagged{{[0-9]+}}, i64 70
; HEAVY-NEXT:    %jitlock.recursions = load atomic i64, ptr %jitlock.recursions.addr monotonic, align 8
; HEAVY-NEXT:    [[REC:%.*]] = add i64 %jitlock.recursions, 1
; HEAVY-NEXT:    store atomic i64 [[REC]], ptr %jitlock.recursions.addr monotonic, align 8
; HEAVY-NEXT:    br label %jitlock.enter.done
; HEAVY-EMPTY:
; Everything else, from the state before the attempt: the runtime.
; HEAVY-NEXT:  jitlock.enter.slow:
; HEAVY-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) #[[COLD:[0-9]+]]
; HEAVY-NEXT:    br label %jitlock.enter.done
; HEAVY-EMPTY:
; HEAVY-NEXT:  jitlock.enter.done:
; HEAVY-NEXT:    ret void
; HEAVY-NEXT:  }
; No fast lock, and no lock-stack access but the full-stack test.
; HEAVY-NOT:   jitlock.enter.{{top|cas|push|inflated}}

; The exit: X1 is weighted for a monitor (not on the lock stack).
; HEAVY-LABEL: define void @exit(ptr %o) {
; HEAVY:         %jitlock.on.top = icmp eq ptr %jitlock.top.entry, %o
; HEAVY-NEXT:    br i1 %jitlock.on.top, label %jitlock.exit.pop, label %jitlock.exit.inflated, !prof [[UNLIKELY]]
; HEAVY:       jitlock.exit.cas:
; HEAVY:       jitlock.exit.inflated:
; N2 counts a recursion down inline when the owner word is self.
; HEAVY:       jitlock.exit.owned:
; HEAVY:       jitlock.exit.monitor.recursive:
; HEAVY-NEXT:    %jitlock.recursions.next = sub i64 %jitlock.recursions, 1
; HEAVY-NEXT:    store atomic i64 %jitlock.recursions.next, ptr %jitlock.recursions.addr monotonic, align 8
; HEAVY-NEXT:    br label %jitlock.exit.done
; HEAVY:       jitlock.exit.release:

; HEAVY:       attributes #[[COLD]] = { cold }
; HEAVY:       [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 [[#BIG:]]}
; HEAVY:       [[LIKELY]] = !{!"branch_weights", i32 [[#BIG]], i32 1}

; LIGHT-LABEL: define void @enter(ptr %o) {
; LIGHT:         %jitlock.has.monitor = icmp ne i64 {{%.*}}, 0
; LIGHT:       jitlock.enter.cas:
; LIGHT:       jitlock.enter.push:
; LIGHT-LABEL: define void @exit(ptr %o) {
; LIGHT:         br i1 %jitlock.on.top, label %jitlock.exit.pop, label %jitlock.exit.inflated, !prof [[LIKELY:![0-9]+]]
; LIGHT:       [[LIKELY]] = !{!"branch_weights", i32 {{[0-9]+}}, i32 1}

; REMARK: remark: <unknown>:0:0: monitor enter in 'enter' lowered to an inline fast path (heavy locking: the monitor path only; no fast lock, no lock-stack push)
; REMARK: remark: <unknown>:0:0: monitor exit in 'exit' lowered to an inline fast path{{$}}

; CONFLICT: error: jitlock: conflicting configuration: locking is lightweight in the pass configuration but heavy in module flag jitlock.locking
; BADPARAM: unknown locking 'biased'; expected lightweight|heavy|reserved
; BADFLAG:  error: jitlock: module flag jitlock.locking{{.*}}; expected lightweight|heavy|reserved

;--- enter.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

;--- heavy-flag.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.locking", !"heavy"}

;--- bad-flag.ll
declare void @jitlock.monitor.enter(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.locking", !"biased"}
