; monitors=index: an inflated header (tag 10) holds a monitor index, and M1
; and N2 find the monitor at base + (h >> monitor_index_shift) *
; monitor_stride, base loaded from the thread at monitor_base_offset. The
; monitor's fields are then at their plain offsets (owner +64, recursions
; +72), not biased by the tag as with pointer storage. Everything else (E1-E5,
; X1-X4, M2, N3) is the code of enter.ll and exit.ll. The layout stamp names
; the storage with the fields it compiled in.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=index;exit=store>' -S %s \
; RUN:   | FileCheck %s
; The same from the module flag jitlock.monitors.
; RUN: sed 's/^;FLAG: //' %s > %t.flag.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t.flag.ll \
; RUN:   | FileCheck %s
; locking=heavy: the same monitor path.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=index;locking=heavy>' -S %s \
; RUN:   | FileCheck %s --check-prefix=HEAVY
; One remark per operation names the storage.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=index>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

;FLAG: !llvm.module.flags = !{!0}
;FLAG: !0 = !{i32 1, !"jitlock.monitors", !"index"}

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

; CHECK-LABEL: define void @enter(ptr %o) {
; CHECK-NOT:     jitlock.monitor.base.known
; CHECK:       jitlock.enter.inflated:
; CHECK-NEXT:    %[[BITS:[0-9]+]] = and i64 %jitlock.header, 3
; CHECK-NEXT:    %jitlock.is.monitor = icmp eq i64 %[[BITS]], 2
; CHECK-NEXT:    br i1 %jitlock.is.monitor, label %jitlock.enter.monitor, label %jitlock.enter.slow
; M1: m = base + (h >> shift) * stride, then the owner word at m + 64.
; CHECK:       jitlock.enter.monitor:
; CHECK-NEXT:    %jitlock.monitor.base.addr = getelementptr i8, ptr %jitlock.thread, i64 [[BASE:[0-9]+]]
; CHECK-NEXT:    %jitlock.monitor.base = load atomic ptr, ptr %jitlock.monitor.base.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.monitor.index = lshr i64 %jitlock.header, [[SHIFT:[0-9]+]]
; CHECK-NEXT:    %jitlock.monitor.offset = mul i64 %jitlock.monitor.index, [[STRIDE:[0-9]+]]
; CHECK-NEXT:    %jitlock.monitor = getelementptr i8, ptr %jitlock.monitor.base, i64 %jitlock.monitor.offset
; CHECK-NEXT:    %jitlock.self = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor, i64 64
; CHECK-NEXT:    %jitlock.owner = load atomic i64, ptr %jitlock.owner.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.owner.is.free = icmp eq i64 %jitlock.owner, 0
; CHECK-NEXT:    br i1 %jitlock.owner.is.free, label %jitlock.enter.monitor.cas, label %jitlock.enter.owned
; CHECK:       jitlock.enter.monitor.cas:
; CHECK-NEXT:    %jitlock.owner.cas = cmpxchg ptr %jitlock.owner.addr, i64 %jitlock.owner, i64 %jitlock.self acquire monotonic, align 8
; M2: the recursion count of the same monitor, unbiased.
; CHECK:       jitlock.enter.monitor.recursive:
; CHECK-NEXT:    %jitlock.recursions.addr = getelementptr i8, ptr %jitlock.monitor, i64 72
; CHECK-NEXT:    %jitlock.recursions = load atomic i64, ptr %jitlock.recursions.addr monotonic, align 8
; CHECK-NOT:     inttoptr
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)

; CHECK-LABEL: define void @exit(ptr %o) {
; N1, then N2's m from the index.
; CHECK:       jitlock.exit.inflated:
; CHECK-NEXT:    %jitlock.header.inflated = load atomic i64, ptr %o monotonic, align 8
; CHECK:         br i1 %jitlock.is.monitor{{[0-9]*}}, label %jitlock.exit.monitor, label %jitlock.exit.slow
; CHECK:       jitlock.exit.monitor:
; CHECK-NEXT:    %[[EBASEADDR:jitlock.monitor.base.addr[0-9]*]] = getelementptr i8, ptr %jitlock.thread, i64 [[BASE]]
; CHECK-NEXT:    %[[EBASE:jitlock.monitor.base[0-9]*]] = load atomic ptr, ptr %[[EBASEADDR]] monotonic, align 8
; A thread that is not attached has no base (0), and its exit reaches N2:
; the runtime refuses it.
; CHECK-NEXT:    %jitlock.monitor.base.known = icmp ne ptr %[[EBASE]], null
; CHECK-NEXT:    br i1 %jitlock.monitor.base.known, label %jitlock.exit.monitor.indexed, label %jitlock.exit.slow, !prof [[LIKELY:![0-9]+]]
; CHECK:       jitlock.exit.monitor.indexed:
; CHECK-NEXT:    %[[EINDEX:jitlock.monitor.index[0-9]*]] = lshr i64 %jitlock.header.inflated, [[SHIFT]]
; CHECK-NEXT:    %[[EOFF:jitlock.monitor.offset[0-9]*]] = mul i64 %[[EINDEX]], [[STRIDE]]
; CHECK-NEXT:    %[[EMON:jitlock.monitor[0-9]*]] = getelementptr i8, ptr %[[EBASE]], i64 %[[EOFF]]
; CHECK-NEXT:    %[[SELF:jitlock.self[0-9]*]] = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %[[OWNERADDR:jitlock.owner.addr[0-9]*]] = getelementptr i8, ptr %[[EMON]], i64 64
; CHECK-NEXT:    %[[OWNER:jitlock.owner[0-9]*]] = load atomic i64, ptr %[[OWNERADDR]] monotonic, align 8
; CHECK:       jitlock.exit.owned:
; CHECK-NEXT:    %[[RECADDR:jitlock.recursions.addr[0-9]*]] = getelementptr i8, ptr %[[EMON]], i64 72
; CHECK-NEXT:    %[[REC:jitlock.recursions[0-9]*]] = load atomic i64, ptr %[[RECADDR]] monotonic, align 8
; N3: store m.owner = 0, release; then the entry count.
; CHECK:       jitlock.exit.release:
; CHECK-NEXT:    store atomic i64 0, ptr %[[OWNERADDR]] release, align 8
; CHECK-NEXT:    fence {{(syncscope\("singlethread"\) )?}}seq_cst
; CHECK-NEXT:    %[[COUNTADDR:jitlock.entry.count.addr[0-9]*]] = getelementptr i8, ptr %[[EMON]], i64 80
; CHECK-NEXT:    %[[COUNT:jitlock.entry.count[0-9]*]] = load atomic i32, ptr %[[COUNTADDR]] monotonic, align 4
; CHECK-NOT:     inttoptr
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)

; The stamp: index storage with the shift, stride and base compiled in.
; CHECK:       !"jitlock.lowered-layout", !"abi={{.*}};monitors=index,shift=[[SHIFT]],stride=[[STRIDE]],base=[[BASE]]"}
; CHECK:       [[LIKELY]] = !{!"branch_weights", i32 {{[0-9]+}}, i32 1}

; HEAVY-LABEL: define void @enter(ptr %o) {
; HEAVY-NOT:     jitlock.enter.cas
; HEAVY:       jitlock.enter.monitor:
; HEAVY-NEXT:    %jitlock.monitor.base.addr = getelementptr i8, ptr %jitlock.thread, i64 {{[0-9]+}}
; HEAVY:         %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor, i64 64
; HEAVY-LABEL: define void @exit(ptr %o) {
; HEAVY:       !"jitlock.lowered-layout", !"abi={{.*}};monitors=index,

; REMARK: remark: <unknown>:0:0: monitor enter in 'enter' lowered to an inline fast path (monitors=index: the monitor at the thread's monitor base plus the header's index times {{[0-9]+}})
; REMARK: remark: <unknown>:0:0: monitor exit in 'exit' lowered to an inline fast path (monitors=index: the monitor at the thread's monitor base plus the header's index times {{[0-9]+}})
