; monitors=table: an inflated header keeps its upper bits with tag 10, and
; M1 and N2 find the monitor in the thread's monitor cache: entries of 16
; bytes {object, monitor} at thread + monitor_cache_offset, the first
; monitor_cache_probes of them compared with obj, unrolled; the first hit's
; monitor is m, and a miss after the last probe calls the runtime (which
; finds m in its table and fills the cache). The monitor's fields are at
; their plain offsets (owner +64, recursions +72). Everything else is the
; code of enter.ll and exit.ll. The layout stamp names the storage with the
; cache fields compiled in.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table;exit=store>' -S %s \
; RUN:   | FileCheck %s
; The number of probes is the layout's: one compare per probe, in both
; operations; the second probe reads the next entry.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table;exit=store>' -S %s \
; RUN:   | grep jitlock.lowered-layout | sed 's/.*probes=\([0-9]*\).*/\1/' > %t.probes
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table;exit=store>' -S %s \
; RUN:   | grep -c 'icmp eq ptr %jitlock.cache.object' > %t.compares
; RUN: %python -c "import sys; p = int(open(sys.argv[1]).read()); c = int(open(sys.argv[2]).read()); sys.exit(0 if p >= 1 and c == 2 * p else 1)" %t.probes %t.compares
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table;exit=store>' -S %s \
; RUN:   | FileCheck %s --check-prefix=PROBE1
; One remark per operation names the storage.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=table>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=REMARK

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

; CHECK-LABEL: define void @enter(ptr %o) {
; CHECK:       jitlock.enter.inflated:
; CHECK:         br i1 %jitlock.is.monitor, label %jitlock.enter.monitor, label %jitlock.enter.slow
; M1, the first probe: entry 0's object is obj? Then m is its monitor, the
; word after it, loaded in a block of its own.
; CHECK:       jitlock.enter.monitor:
; CHECK-NEXT:    %jitlock.cache.entry = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE:]]
; CHECK-NEXT:    %jitlock.cache.object = load atomic ptr, ptr %jitlock.cache.entry monotonic, align 8
; CHECK-NEXT:    %jitlock.cache.hit = icmp eq ptr %jitlock.cache.object, %o
; CHECK-NEXT:    br i1 %jitlock.cache.hit, label %jitlock.enter.monitor.hit0, label %{{jitlock.enter.monitor.probe1|jitlock.enter.slow}}
; CHECK:       jitlock.enter.monitor.hit0:
; CHECK-NEXT:    %jitlock.cache.monitor.addr = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE+8]]
; CHECK-NEXT:    %jitlock.cache.monitor = load atomic ptr, ptr %jitlock.cache.monitor.addr monotonic, align 8
; CHECK-NEXT:    br label %jitlock.enter.monitor.found
; The found block: the hit's monitor, its owner word at m + 64, M1's
; test-then-CAS.
; CHECK:       jitlock.enter.monitor.found:
; CHECK-NEXT:    %jitlock.monitor = phi ptr [ %jitlock.cache.monitor, %jitlock.enter.monitor.hit0 ]
; CHECK-NEXT:    %jitlock.self = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor, i64 64
; CHECK-NEXT:    %jitlock.owner = load atomic i64, ptr %jitlock.owner.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.owner.is.free = icmp eq i64 %jitlock.owner, 0
; CHECK:       jitlock.enter.monitor.cas:
; CHECK-NEXT:    %jitlock.owner.cas = cmpxchg ptr %jitlock.owner.addr, i64 %jitlock.owner, i64 %jitlock.self acquire monotonic, align 8
; CHECK:       jitlock.enter.monitor.recursive:
; CHECK-NEXT:    %jitlock.recursions.addr = getelementptr i8, ptr %jitlock.monitor, i64 72
; CHECK-NOT:     inttoptr
; The last probe's miss (and every other slow case) calls the runtime.
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)

; CHECK-LABEL: define void @exit(ptr %o) {
; CHECK:       jitlock.exit.monitor:
; CHECK-NEXT:    %[[E0:jitlock.cache.entry[0-9]*]] = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE]]
; CHECK-NEXT:    %[[O0:jitlock.cache.object[0-9]*]] = load atomic ptr, ptr %[[E0]] monotonic, align 8
; CHECK-NEXT:    %[[H0:jitlock.cache.hit[0-9]*]] = icmp eq ptr %[[O0]], %o
; CHECK-NEXT:    br i1 %[[H0]], label %jitlock.exit.monitor.hit0, label %{{jitlock.exit.monitor.probe1|jitlock.exit.slow}}
; CHECK:       jitlock.exit.monitor.hit0:
; CHECK-NEXT:    %[[MADDR:jitlock.cache.monitor.addr[0-9]*]] = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE+8]]
; CHECK-NEXT:    %[[M0:jitlock.cache.monitor[0-9]*]] = load atomic ptr, ptr %[[MADDR]] monotonic, align 8
; CHECK:       jitlock.exit.monitor.found:
; CHECK-NEXT:    %[[MON:jitlock.monitor[0-9]*]] = phi ptr [ %[[M0]], %jitlock.exit.monitor.hit0 ]
; CHECK-NEXT:    %[[SELF:jitlock.self[0-9]*]] = ptrtoint ptr %jitlock.thread to i64
; CHECK-NEXT:    %[[OWNERADDR:jitlock.owner.addr[0-9]*]] = getelementptr i8, ptr %[[MON]], i64 64
; CHECK-NEXT:    %[[OWNER:jitlock.owner[0-9]*]] = load atomic i64, ptr %[[OWNERADDR]] monotonic, align 8
; CHECK:       jitlock.exit.owned:
; CHECK-NEXT:    %[[RECADDR:jitlock.recursions.addr[0-9]*]] = getelementptr i8, ptr %[[MON]], i64 72
; CHECK-NEXT:    %[[REC:jitlock.recursions[0-9]*]] = load atomic i64, ptr %[[RECADDR]] monotonic, align 8
; CHECK:       jitlock.exit.release:
; CHECK-NEXT:    store atomic i64 0, ptr %[[OWNERADDR]] release, align 8
; CHECK-NEXT:    fence {{(syncscope\("singlethread"\) )?}}seq_cst
; CHECK-NEXT:    %[[COUNTADDR:jitlock.entry.count.addr[0-9]*]] = getelementptr i8, ptr %[[MON]], i64 80
; CHECK-NEXT:    %[[COUNT:jitlock.entry.count[0-9]*]] = load atomic i32, ptr %[[COUNTADDR]] monotonic, align 4
; CHECK-NOT:     inttoptr
; CHECK:       jitlock.exit.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)

; CHECK:       !"jitlock.lowered-layout", !"abi={{.*}};monitors=table,cache=[[#CACHE]],entries={{[0-9]+}},probes={{[0-9]+}}"}

; PROBE1:      %jitlock.cache.entry = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE:]]
; PROBE1:      jitlock.enter.monitor.probe1:
; PROBE1-NEXT:   %{{.*}} = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE+16]]
; PROBE1:      jitlock.enter.monitor.hit1:
; PROBE1-NEXT:   %{{.*}} = getelementptr i8, ptr %jitlock.thread, i64 [[#CACHE+24]]

; REMARK: remark: <unknown>:0:0: monitor enter in 'enter' lowered to an inline fast path (monitors=table: the monitor from {{[0-9]+}} probes of the thread's monitor cache)
; REMARK: remark: <unknown>:0:0: monitor exit in 'exit' lowered to an inline fast path (monitors=table: the monitor from {{[0-9]+}} probes of the thread's monitor cache)
