; The complete inline lowering of jitlock.monitor.exit, block by block, with
; the protocol steps of lib/Runtime/Synchronizer.cpp (X1-X4, N1-N3). Default
; layout: top at thread+0, monitor owner at header+62, recursions at
; header+70 and the entry count at header+78 (the monitor is header - 0b10).
; Both inflated exits: store (no fence) and fence.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;exit=store>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,STORE --implicit-check-not=fence
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;exit=fence>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,FENCE

declare void @jitlock.monitor.exit(ptr)

define void @exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @exit(ptr %o) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; CHECK-NEXT:    %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; X1: is obj the top entry, [thread + top - 8]?
; CHECK-NEXT:    %jitlock.top = load atomic i32, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    %jitlock.top.popped = sub i32 %jitlock.top, 8
; CHECK-NEXT:    [[NEW64:%.*]] = zext i32 %jitlock.top.popped to i64
; CHECK-NEXT:    %jitlock.top.slot = getelementptr i8, ptr %jitlock.thread, i64 [[NEW64]]
; CHECK-NEXT:    %jitlock.top.entry = load atomic ptr, ptr %jitlock.top.slot monotonic, align 8
; CHECK-NEXT:    %jitlock.on.top = icmp eq ptr %jitlock.top.entry, %o
; CHECK-NEXT:    br i1 %jitlock.on.top, label %jitlock.exit.pop, label %jitlock.exit.inflated, !prof [[LIKELY:![0-9]+]]
;
; X2: pop. X3: the entry below is obj too: a recursive exit, done.
; CHECK:       jitlock.exit.pop:
; CHECK-NEXT:    store atomic i32 %jitlock.top.popped, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    %jitlock.below = getelementptr i8, ptr %jitlock.top.slot, i64 -8
; CHECK-NEXT:    %jitlock.below.entry = load atomic ptr, ptr %jitlock.below monotonic, align 8
; CHECK-NEXT:    %jitlock.recursive = icmp eq ptr %jitlock.below.entry, %o
; CHECK-NEXT:    br i1 %jitlock.recursive, label %jitlock.exit.done, label %jitlock.exit.unlock{{$}}
;
; X4: bits 00, then CAS h -> h | 01, release on success, relaxed on failure.
; CHECK:       jitlock.exit.unlock:
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK-NEXT:    [[BITS:%.*]] = and i64 %jitlock.header, 3
; CHECK-NEXT:    %jitlock.is.fast = icmp eq i64 [[BITS]], 0
; CHECK-NEXT:    br i1 %jitlock.is.fast, label %jitlock.exit.cas, label %jitlock.exit.restore, !prof [[LIKELY]]
; CHECK:       jitlock.exit.cas:
; CHECK-NEXT:    [[UNLOCKED:%.*]] = or i64 %jitlock.header, 1
; CHECK-NEXT:    %jitlock.cas = cmpxchg ptr %o, i64 %jitlock.header, i64 [[UNLOCKED]] release monotonic, align 8
; CHECK-NEXT:    [[OK:%.*]] = extractvalue { i64, i1 } %jitlock.cas, 1
; CHECK-NEXT:    br i1 [[OK]], label %jitlock.exit.done, label %jitlock.exit.restore, !prof [[LIKELY]]
;
; A failed X4 pushes obj back (the old top) before calling the runtime.
; CHECK:       jitlock.exit.restore:
; CHECK-NEXT:    store atomic i32 %jitlock.top, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    br label %jitlock.exit.slow
;
; N1: the header's bits are exactly 10.
; CHECK:       jitlock.exit.inflated:
; CHECK-NEXT:    %jitlock.header.inflated = load atomic i64, ptr %o monotonic, align 8
; CHECK-NEXT:    [[IBITS:%.*]] = and i64 %jitlock.header.inflated, 3
; CHECK-NEXT:    %jitlock.is.monitor = icmp eq i64 [[IBITS]], 2
; CHECK-NEXT:    br i1 %jitlock.is.monitor, label %jitlock.exit.monitor, label %jitlock.exit.slow, !prof [[LIKELY]]
; N2: the owner word (relaxed) is exactly self, or the runtime (another
; owner, an anonymous one, a deflater).
; CHECK:       jitlock.exit.monitor:
; CHECK-NEXT:    %jitlock.self = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %jitlock.monitor.tagged = inttoptr i64 %jitlock.header.inflated to ptr
; CHECK-NEXT:    %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor.tagged, i64 62
; CHECK-NEXT:    %jitlock.owner = load atomic i64, ptr %jitlock.owner.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.owner.is.self = icmp eq i64 %jitlock.owner, %jitlock.self
; CHECK-NEXT:    br i1 %jitlock.owner.is.self, label %jitlock.exit.owned, label %jitlock.exit.slow, !prof [[LIKELY]]
; Then the recursions: none, N3; some, recursions -= 1, a relaxed store, no
; call.
; CHECK:       jitlock.exit.owned:
; CHECK-NEXT:    %jitlock.monitor.tagged{{[0-9]+}} = inttoptr i64 %jitlock.header.inflated to ptr
; CHECK-NEXT:    %jitlock.recursions.addr = getelementptr i8, ptr %jitlock.monitor.tagged{{[0-9]+}}, i64 70
; CHECK-NEXT:    %jitlock.recursions = load atomic i64, ptr %jitlock.recursions.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.no.recursion = icmp eq i64 %jitlock.recursions, 0
; CHECK-NEXT:    br i1 %jitlock.no.recursion, label %jitlock.exit.release, label %jitlock.exit.monitor.recursive, !prof [[LIKELY]]
; CHECK:       jitlock.exit.monitor.recursive:
; CHECK-NEXT:    %jitlock.recursions.next = sub i64 %jitlock.recursions, 1
; CHECK-NEXT:    store atomic i64 %jitlock.recursions.next, ptr %jitlock.recursions.addr monotonic, align 8
; CHECK-NEXT:    br label %jitlock.exit.done
; N3: store 0, release; with exit=fence a full fence; with exit=store a
; single-thread fence, which emits no instruction but keeps the entry
; count's load below the store; then the entry count at header+78:
; nonzero, the monitor is released and the runtime wakes a queued thread.
; CHECK:       jitlock.exit.release:
; CHECK-NEXT:    store atomic i64 0, ptr %jitlock.owner.addr release, align 8
; STORE-NEXT:    fence syncscope("singlethread") seq_cst
; FENCE-NEXT:    fence seq_cst
; CHECK-NEXT:    %jitlock.monitor.tagged{{[0-9]+}} = inttoptr i64 %jitlock.header.inflated to ptr
; CHECK-NEXT:    %jitlock.entry.count.addr = getelementptr i8, ptr %jitlock.monitor.tagged{{[0-9]+}}, i64 78
; CHECK-NEXT:    %jitlock.entry.count = load atomic i32, ptr %jitlock.entry.count.addr monotonic, align 4
; CHECK-NEXT:    %jitlock.none.queued = icmp eq i32 %jitlock.entry.count, 0
; CHECK-NEXT:    br i1 %jitlock.none.queued, label %jitlock.exit.done, label %jitlock.exit.queued, !prof [[LIKELY]]
;
; CHECK:       jitlock.exit.slow:
; CHECK-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) [[COLD:#[0-9]+]]
; CHECK-NEXT:    br label %jitlock.exit.done
;
; CHECK:       jitlock.exit.queued:
; CHECK-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_exit_queued_slow(ptr %jitlock.thread, ptr %o) [[COLD]]
; CHECK-NEXT:    br label %jitlock.exit.done
;
; CHECK:       jitlock.exit.done:
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; CHECK-NOT:   @jitlock.monitor.exit
; CHECK:       declare i32 @jitlock_rt_monitor_exit_slow(ptr, ptr) [[NOUNWIND:#[0-9]+]]
; CHECK:       declare i32 @jitlock_rt_monitor_exit_queued_slow(ptr, ptr) [[NOUNWIND]]
; CHECK-DAG:   attributes [[NOUNWIND]] = { nounwind }
; CHECK-DAG:   attributes [[COLD]] = { cold }
; CHECK-DAG:   [[LIKELY]] = !{!"branch_weights", i32 1048575, i32 1}
