; The complete inline lowering of jitlock.monitor.enter, block by block, with
; the protocol steps of lib/Runtime/Synchronizer.cpp (E1-E5, M1-M2). The
; numbers are the runtime's default layout: lock-stack top at thread+0, slots
; from thread+64 to thread+128 (capacity 8), monitor owner at +64 and
; recursions at +72, so owner = (header - 0b10) + 64 = header + 62.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %s | FileCheck %s

declare void @jitlock.monitor.enter(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

; CHECK-LABEL: define void @enter(ptr %o) {
; CHECK-NEXT:  entry:
; The thread, materialized first (jitlock-lower-thread, tls mode).
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; CHECK-NEXT:    %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; E1: the header, relaxed. Header offset 0: no GEP.
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; E2: a full lock stack (top >= end) goes to the runtime, unlikely. Before
; the header's bits are tested: a thread that is not attached has a full
; lock stack, and must not reach M1.
; CHECK-NEXT:    %jitlock.top = load atomic i32, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    %jitlock.stack.full = icmp uge i32 %jitlock.top, 128
; CHECK-NEXT:    br i1 %jitlock.stack.full, label %jitlock.enter.slow, label %jitlock.enter.header, !prof [[UNLIKELY:![0-9]+]]
;
; E3: bit 1 set (10 monitor, 11 embedder) leaves the fast path, unlikely.
; CHECK:       jitlock.enter.header:
; CHECK-NEXT:    [[BIT1:%.*]] = and i64 %jitlock.header, 2
; CHECK-NEXT:    %jitlock.has.monitor = icmp ne i64 [[BIT1]], 0
; CHECK-NEXT:    br i1 %jitlock.has.monitor, label %jitlock.enter.inflated, label %jitlock.enter.top, !prof [[UNLIKELY]]
;
; E4: the entry below top (the sentinel when empty) is obj: recursion.
; CHECK:       jitlock.enter.top:
; CHECK-NEXT:    [[TOP64:%.*]] = zext i32 %jitlock.top to i64
; CHECK-NEXT:    %jitlock.slot = getelementptr i8, ptr %jitlock.thread, i64 [[TOP64]]
; CHECK-NEXT:    %jitlock.prev = getelementptr i8, ptr %jitlock.slot, i64 -8
; CHECK-NEXT:    %jitlock.top.entry = load atomic ptr, ptr %jitlock.prev monotonic, align 8
; CHECK-NEXT:    %jitlock.recursive = icmp eq ptr %jitlock.top.entry, %o
; CHECK-NEXT:    br i1 %jitlock.recursive, label %jitlock.enter.push, label %jitlock.enter.cas{{$}}
;
; E5: CAS (h | 01) -> (h & ~11), acquire on success, relaxed on failure.
; CHECK:       jitlock.enter.cas:
; CHECK-NEXT:    %jitlock.expected = or i64 %jitlock.header, 1
; CHECK-NEXT:    %jitlock.desired = and i64 %jitlock.header, -4
; CHECK-NEXT:    %jitlock.cas = cmpxchg ptr %o, i64 %jitlock.expected, i64 %jitlock.desired acquire monotonic, align 8
; CHECK-NEXT:    [[OK:%.*]] = extractvalue { i64, i1 } %jitlock.cas, 1
; CHECK-NEXT:    br i1 [[OK]], label %jitlock.enter.push, label %jitlock.enter.slow, !prof [[LIKELY:![0-9]+]]
;
; The push: store obj at [thread + top], then top += 8. No atomic RMW.
; CHECK:       jitlock.enter.push:
; CHECK-NEXT:    store atomic ptr %o, ptr %jitlock.slot monotonic, align 8
; CHECK-NEXT:    %jitlock.top.next = add i32 %jitlock.top, 8
; CHECK-NEXT:    store atomic i32 %jitlock.top.next, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    br label %jitlock.enter.done
;
; M1: exactly 10; test the owner word (relaxed load), and only when it is 0
; CAS it 0 -> self, acquire. A failed CAS goes to the runtime.
; CHECK:       jitlock.enter.inflated:
; CHECK-NEXT:    [[BITS:%.*]] = and i64 %jitlock.header, 3
; CHECK-NEXT:    %jitlock.is.monitor = icmp eq i64 [[BITS]], 2
; CHECK-NEXT:    br i1 %jitlock.is.monitor, label %jitlock.enter.monitor, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK:       jitlock.enter.monitor:
; CHECK-NEXT:    %jitlock.self = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %jitlock.monitor.tagged = inttoptr i64 %jitlock.header to ptr
; CHECK-NEXT:    %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor.tagged, i64 62
; CHECK-NEXT:    %jitlock.owner = load atomic i64, ptr %jitlock.owner.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.owner.is.free = icmp eq i64 %jitlock.owner, 0
; CHECK-NEXT:    br i1 %jitlock.owner.is.free, label %jitlock.enter.monitor.cas, label %jitlock.enter.owned, !prof [[LIKELY]]
; CHECK:       jitlock.enter.monitor.cas:
; CHECK-NEXT:    %jitlock.owner.cas = cmpxchg ptr %jitlock.owner.addr, i64 %jitlock.owner, i64 %jitlock.self acquire monotonic, align 8
; CHECK-NEXT:    [[OWNED:%.*]] = extractvalue { i64, i1 } %jitlock.owner.cas, 1
; CHECK-NEXT:    br i1 [[OWNED]], label %jitlock.enter.done, label %jitlock.enter.slow, !prof [[LIKELY]]
;
; M2: the owner word loaded by M1 is self (exactly: not with the queued
; bit): recursions += 1, relaxed. Anything else nonzero: the runtime.
; CHECK:       jitlock.enter.owned:
; CHECK-NEXT:    %jitlock.owner.is.self = icmp eq i64 %jitlock.owner, %jitlock.self
; CHECK-NEXT:    br i1 %jitlock.owner.is.self, label %jitlock.enter.monitor.recursive, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK:       jitlock.enter.monitor.recursive:
; CHECK-NEXT:    %jitlock.monitor.tagged{{[0-9]*}} = inttoptr i64 %jitlock.header to ptr
; CHECK-NEXT:    %jitlock.recursions.addr = getelementptr i8, ptr %jitlock.monitor.tagged{{[0-9]*}}, i64 70
; CHECK-NEXT:    %jitlock.recursions = load atomic i64, ptr %jitlock.recursions.addr monotonic, align 8
; CHECK-NEXT:    [[INC:%.*]] = add i64 %jitlock.recursions, 1
; CHECK-NEXT:    store atomic i64 [[INC]], ptr %jitlock.recursions.addr monotonic, align 8
; CHECK-NEXT:    br label %jitlock.enter.done
;
; Everything else: the runtime, in a cold call.
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) [[COLD:#[0-9]+]]
; CHECK-NEXT:    br label %jitlock.enter.done
;
; CHECK:       jitlock.enter.done:
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; The contract's functions are gone; the runtime's are declared nounwind.
; CHECK-NOT:   @jitlock.monitor.enter
; CHECK-NOT:   @jitlock.thread(
; CHECK:       declare i32 @jitlock_rt_monitor_enter_slow(ptr, ptr) [[NOUNWIND:#[0-9]+]]
; CHECK:       declare ptr @llvm.thread.pointer()
; CHECK-DAG:   attributes [[NOUNWIND]] = { nounwind }
; CHECK-DAG:   attributes [[COLD]] = { cold }
; CHECK-DAG:   [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048575}
; CHECK-DAG:   [[LIKELY]] = !{!"branch_weights", i32 1048575, i32 1}
