; shapes.ll - the benchmark shapes of docs/benchmarks.md as a frontend
; would emit them, for the `llvm` and `heavy` paths of jitlock-bench (and the
; floor). jitlock-bench embeds this text at build time and JIT-compiles it
; in-process with jitlock::JitSession (TLS mode, this process's layout), once
; lowered for lightweight locking and once for heavy monitors.
;
; Every function has the same type, void (ptr %thread, ptr %a, ptr %b,
; i64 %n), and does %n lock+unlock pairs, each with one plain load+add+store
; of a payload inside the lock. %thread is unused here (lowered code finds
; the thread itself, through the thread pointer); the asmjit kernels take it
; in a register as a baseline JIT would, so all paths share one call type.
; The loops are the same as the asmjit and C++ kernels in main.cpp.
;
; An object is 64 bytes, 64-aligned: the 64-bit header (1 = unlocked)
; at offset 0, the payload at 8, then room for the pthread path's mutex.
;
; JITLOCK_TOP_OFFSET is replaced, before parsing, by the runtime layout's
; lock_stack_top_offset (only floor/lockstack uses it).
;
; The safepoint kernels at the end (poll/none, poll/llvm, and the loop the
; ttsp and handshake threads run) share the same type; their polls are
; lowered to the inline poll of the thread's poll word (P1).

%Object = type { i64, i64, [48 x i8] }

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()
declare ptr @jitlock.thread()
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; simple (and inflated, contended2): synchronized (a) { a.payload++; }
define void @bench_simple(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %a)
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  call void @jitlock.monitor.exit(ptr %a)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; recursive: synchronized (a) { synchronized (a) { a.payload++; } }
define void @bench_recursive(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; serial: synchronized (a) { synchronized (b) { b.payload++; } }
define void @bench_serial(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %b, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; churn: %n fresh objects, bump-allocated from %a (the arena cursor): each is
; zeroed (a zeroed mutex is PTHREAD_MUTEX_INITIALIZER), gets the unlocked
; header, and is locked once: o = new Object(); synchronized (o) { o.payload++; }
define void @bench_churn(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %o = getelementptr inbounds %Object, ptr %a, i64 %i
  call void @llvm.memset.p0.i64(ptr align 64 %o, i8 0, i64 64, i1 false)
  store i64 JITLOCK_FRESH_HEADER, ptr %o, align 64
  call void @jitlock.monitor.enter(ptr %o)
  %payload = getelementptr inbounds %Object, ptr %o, i64 0, i32 1
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; floor: the simple loop with two bare CAS instructions on the header and no
; lock semantics: no lock stack, no checks, no slow path. 01 -> 00 with
; acquire ordering, the increment, 00 -> 01 with release ordering.
define void @bench_floor(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acquire = cmpxchg ptr %a, i64 1, i64 0 acquire monotonic
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  %release = cmpxchg ptr %a, i64 0, i64 1 release monotonic
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; floor/cas-store: the floor with its release CAS replaced by a release
; store: what an unlock that needs no atomic read-modify-write costs (the
; inflated exit, N3, is such a store plus a plain load). Not a lock.
define void @bench_floor_cas_store(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acquire = cmpxchg ptr %a, i64 1, i64 0 acquire monotonic
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  store atomic i64 1, ptr %a release, align 8
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; floor/lockstack: the floor plus exactly the lock-stack stores that a fast
; lock and unlock make (push: the slot and the top; pop: the top), and no
; loads or checks. Not a locking scheme: it measures what the lock stack
; itself costs next to the two CAS instructions. It writes the calling
; thread's real (empty) lock stack, as a push and a pop would.
define void @bench_floor_lockstack(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %self = call ptr @jitlock.thread()
  %topp = getelementptr inbounds i8, ptr %self, i64 JITLOCK_TOP_OFFSET
  %top = load i32, ptr %topp
  %top.wide = zext i32 %top to i64
  %slot = getelementptr inbounds i8, ptr %self, i64 %top.wide
  %top.pushed = add i32 %top, 8
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %acquire = cmpxchg ptr %a, i64 1, i64 0 acquire monotonic
  store atomic ptr %a, ptr %slot monotonic, align 8
  store atomic i32 %top.pushed, ptr %topp monotonic, align 4
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %payload
  store atomic i32 %top, ptr %topp monotonic, align 4
  %release = cmpxchg ptr %a, i64 0, i64 1 release monotonic
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; poll/none, poll/llvm and poll/unrolled: %n increments of a's payload. The
; load and the store are volatile so that the loop stays a loop: without them
; LLVM folds it into one add of %n (with a poll it cannot, as the poll's slow
; path may read the payload).
;
; poll/llvm has a safepoint poll in every iteration and is otherwise
; poll/none. LLVM does not unroll a loop with a call in it, and the poll
; keeps one (on its cold path); it would unroll poll/none 8 times. So
; poll/none is kept rolled as well (llvm.loop.unroll.disable), and the two
; differ by the poll alone. poll/unrolled is poll/none as LLVM compiles it
; by default: what a loop that needs no poll gains from not having one.
define void @bench_poll_none(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load volatile i64, ptr %payload
  %v.next = add i64 %v, 1
  store volatile i64 %v.next, ptr %payload
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done, !llvm.loop !0

done:
  ret void
}

define void @bench_poll_llvm(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load volatile i64, ptr %payload
  %v.next = add i64 %v, 1
  store volatile i64 %v.next, ptr %payload
  call void @jitlock.safepoint.poll()
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done, !llvm.loop !2

done:
  ret void
}

define void @bench_poll_unrolled(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load volatile i64, ptr %payload
  %v.next = add i64 %v, 1
  store volatile i64 %v.next, ptr %payload
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

; The loop of the ttsp and handshake benchmarks: a managed thread's work
; until it is told to stop. Every iteration publishes its count in %counter
; (the synchronizer watches it move to see the thread running) and polls;
; the loop ends once %stop is nonzero. %n is unused.
define void @bench_spin(ptr %thread, ptr %counter, ptr %stop, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  store atomic i64 %i.next, ptr %counter monotonic, align 8
  call void @jitlock.safepoint.poll()
  %stopped = load atomic i64, ptr %stop monotonic, align 8
  %go.on = icmp eq i64 %stopped, 0
  br i1 %go.on, label %loop, label %done

done:
  ret void
}

; philosophers (llvm only): %forks is a ring of objects, %state the calling
; thread's { i64 rng, i64 base, i64 window mask, i64 ring mask }. Each pair
; picks a fork p = (base + (rng & window mask)) & ring mask (xorshift64 for
; rng) and locks p and its neighbour p + 1, the lower address first, then
; increments both payloads: synchronized (lo) { synchronized (hi) { ... } }.
; Neighbouring threads' windows overlap, so they contend on the forks they
; share; rng is stored back for the next call. Each pair ends with a
; safepoint poll: the deflation thread that runs meanwhile reuses a monitor
; only after a handshake with every thread.
define void @bench_philosophers(ptr %thread, ptr %forks, ptr %state, i64 %n) {
entry:
  %base.addr = getelementptr inbounds i64, ptr %state, i64 1
  %window.addr = getelementptr inbounds i64, ptr %state, i64 2
  %ring.addr = getelementptr inbounds i64, ptr %state, i64 3
  %rng0 = load i64, ptr %state
  %base = load i64, ptr %base.addr
  %window = load i64, ptr %window.addr
  %ring = load i64, ptr %ring.addr
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %rng = phi i64 [ %rng0, %entry ], [ %r3, %loop ]
  %s1 = shl i64 %rng, 13
  %r1 = xor i64 %rng, %s1
  %s2 = lshr i64 %r1, 7
  %r2 = xor i64 %r1, %s2
  %s3 = shl i64 %r2, 17
  %r3 = xor i64 %r2, %s3
  %off = and i64 %r3, %window
  %p.sum = add i64 %base, %off
  %p = and i64 %p.sum, %ring
  %q.sum = add i64 %p, 1
  %q = and i64 %q.sum, %ring
  %p.lower = icmp ult i64 %p, %q
  %lo = select i1 %p.lower, i64 %p, i64 %q
  %hi = select i1 %p.lower, i64 %q, i64 %p
  %lo.obj = getelementptr inbounds %Object, ptr %forks, i64 %lo
  %hi.obj = getelementptr inbounds %Object, ptr %forks, i64 %hi
  call void @jitlock.monitor.enter(ptr %lo.obj)
  call void @jitlock.monitor.enter(ptr %hi.obj)
  %lo.payload = getelementptr inbounds %Object, ptr %lo.obj, i64 0, i32 1
  %hi.payload = getelementptr inbounds %Object, ptr %hi.obj, i64 0, i32 1
  %lo.v = load i64, ptr %lo.payload
  %lo.v1 = add i64 %lo.v, 1
  store i64 %lo.v1, ptr %lo.payload
  %hi.v = load i64, ptr %hi.payload
  %hi.v1 = add i64 %hi.v, 1
  store i64 %hi.v1, ptr %hi.payload
  call void @jitlock.monitor.exit(ptr %hi.obj)
  call void @jitlock.monitor.exit(ptr %lo.obj)
  call void @jitlock.safepoint.poll()
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  %rng.out = phi i64 [ %rng0, %entry ], [ %r3, %loop ]
  store i64 %rng.out, ptr %state
  ret void
}

!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.unroll.disable"}
!2 = distinct !{!2, !1}

; elided: a method that allocates a temporary object and locks it (a
; StringBuffer-style temporary), adding one to a's payload through it. The
; temporary lives in %b, which the allocator re-initializes each time: the
; previous one is dead. bench_elided's allocator has a noalias return, so
; jitlock-elide (O2) removes the temporary's lock; bench_elided_noelide's
; is the same function without it, so its lock stays.
define internal noalias ptr @bench_new_temp(ptr %arena) {
  store i64 1, ptr %arena
  ret ptr %arena
}

define internal ptr @bench_new_temp_unrecognized(ptr %arena) {
  store i64 1, ptr %arena
  ret ptr %arena
}

define void @bench_elided(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %t = call ptr @bench_new_temp(ptr %b)
  call void @jitlock.monitor.enter(ptr %t)
  %t.payload = getelementptr inbounds %Object, ptr %t, i64 0, i32 1
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %t.payload
  %w = load i64, ptr %t.payload
  store i64 %w, ptr %payload
  call void @jitlock.monitor.exit(ptr %t)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}

define void @bench_elided_noelide(ptr %thread, ptr %a, ptr %b, i64 %n) {
entry:
  %payload = getelementptr inbounds %Object, ptr %a, i64 0, i32 1
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %t = call ptr @bench_new_temp_unrecognized(ptr %b)
  call void @jitlock.monitor.enter(ptr %t)
  %t.payload = getelementptr inbounds %Object, ptr %t, i64 0, i32 1
  %v = load i64, ptr %payload
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %t.payload
  %w = load i64, ptr %t.payload
  store i64 %w, ptr %payload
  call void @jitlock.monitor.exit(ptr %t)
  %i.next = add nuw i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  ret void
}
