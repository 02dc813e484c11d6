; poll.ll - safepoint polls lowered by LLVM, run on AArch64.
;
; aarch64/safepoint/Tests.cmake lowers this module with jitlock-lower (the
; module flag below asks for polls=auto), compiles it with llc for AArch64
; and links it with aarch64/safepoint/harness.cpp, which runs the loops on
; several threads under qemu-aarch64 while its main thread takes safepoints
; and handshakes.
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
