; Safepoint polls lowered by LLVM, executed on AArch64: this module lowered
; by opt with jitlock-lower (the module flag below asks for polls=auto),
; compiled by llc with LL/SC and with LSE atomics in the monitor the locked
; loop takes, linked with Harness/SafepointHarness.cpp and run under qemu.
; The harness runs the loops on 4 threads while its main thread (not
; attached) takes 100 safepoints: while one is held no counter moves and
; every thread is blocked; once it is released every counter moves again.
; It handshakes each thread (the operation runs once, on that thread), then
; stops the loops, whose counts their monitors' totals match.
;
; REQUIRES: aarch64-exec
; RUN: rm -rf %t && mkdir %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=%a64-tls-offset>' \
; RUN:   -S %s | %a64-stamp > %t/tls.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -S %s | %a64-stamp > %t/call.ll
;
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -filetype=obj %t/tls.ll -o %t/tls.llsc.o
; RUN: %a64-link -o %t/tls.llsc %t/tls.llsc.o %a64-safepoint-harness
; RUN: %qemu-aarch64 %t/tls.llsc --threads 4 --safepoints 100 | FileCheck %s -DTHREAD=tls
;
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/tls.ll -o %t/tls.lse.o
; RUN: %a64-link -o %t/tls.lse %t/tls.lse.o %a64-safepoint-harness
; RUN: %qemu-aarch64 %t/tls.lse --threads 4 --safepoints 100 | FileCheck %s -DTHREAD=tls
;
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -filetype=obj %t/call.ll -o %t/call.llsc.o
; RUN: %a64-link -o %t/call.llsc %t/call.llsc.o %a64-safepoint-harness
; RUN: %qemu-aarch64 %t/call.llsc --threads 4 --safepoints 100 | FileCheck %s -DTHREAD=call
;
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/call.ll -o %t/call.lse.o
; RUN: %a64-link -o %t/call.lse %t/call.lse.o %a64-safepoint-harness
; RUN: %qemu-aarch64 %t/call.lse --threads 4 --safepoints 100 | FileCheck %s -DTHREAD=call
;
; CHECK:      harness: {{.*}}, thread=[[THREAD]], 4 threads, 100 safepoints
; CHECK-NEXT: harness: 4 threads stopped at 100 safepoints and released; {{[0-9]+}} handshakes, each run by its target; counters {{[1-9][0-9]*}} {{[1-9][0-9]*}} {{[1-9][0-9]*}} {{[1-9][0-9]*}}
; CHECK-NEXT: harness: PASS
;
; Each loop counts @sp_counters[tid] up until @sp_stop is set and returns
; its count:
;   @sp_count_explicit  polls with the frontend's jitlock.safepoint.poll();
;   @sp_count_locked    has no poll in the IR (polls=auto places one on its
;                       back-edge: the monitor's runtime calls are no polls)
;                       and increments @sp_locks[tid]'s total inside that
;                       object's monitor. No other thread takes it, so the
;                       loop stays on the inline fast paths (and their CAS,
;                       LSE or not) and never waits in the runtime: the
;                       placed poll is the only way it stops.
; The counters and the flag are atomic: the harness reads and writes them
; while the loops run.

%Object = type { i64, i64 }   ; header (1 = unlocked), total

@sp_locks = global [64 x %Object] zeroinitializer ; headers set by the harness
@sp_counters = global [64 x i64] zeroinitializer
@sp_stop = global i64 0

declare void @jitlock.safepoint.poll()
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define i64 @sp_count_explicit(i64 %tid) {
entry:
  %slot = getelementptr inbounds [64 x i64], ptr @sp_counters, i64 0, i64 %tid
  br label %loop
loop:
  %n = phi i64 [ 0, %entry ], [ %n.next, %loop ]
  %n.next = add i64 %n, 1
  store atomic i64 %n.next, ptr %slot monotonic, align 8
  call void @jitlock.safepoint.poll()
  %stop = load atomic i64, ptr @sp_stop monotonic, align 8
  %done = icmp ne i64 %stop, 0
  br i1 %done, label %out, label %loop
out:
  ret i64 %n.next
}

define i64 @sp_count_locked(i64 %tid) {
entry:
  %slot = getelementptr inbounds [64 x i64], ptr @sp_counters, i64 0, i64 %tid
  %lock = getelementptr inbounds [64 x %Object], ptr @sp_locks, i64 0, i64 %tid
  %total.addr = getelementptr inbounds %Object, ptr %lock, i32 0, i32 1
  br label %loop
loop:
  %n = phi i64 [ 0, %entry ], [ %n.next, %loop ]
  call void @jitlock.monitor.enter(ptr %lock)
  %total = load i64, ptr %total.addr
  %total.next = add i64 %total, 1
  store i64 %total.next, ptr %total.addr
  %n.next = add i64 %n, 1
  store atomic i64 %n.next, ptr %slot monotonic, align 8
  call void @jitlock.monitor.exit(ptr %lock)
  %stop = load atomic i64, ptr @sp_stop monotonic, align 8
  %done = icmp ne i64 %stop, 0
  br i1 %done, label %out, label %loop
out:
  ret i64 %n.next
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.polls", !"auto"}
