; deep.ll - deep recursion with method-entry stack checks, holding locks on
; the way down.
;
; Each thread recurses K levels (K = @jitlock_example_iterations) into
; @descend, a "jitlock-stack-bang" function with a frame of a little over
; 512 bytes. Every 128th level locks one of its thread's three objects, in
; turn (a, b, c, a, b, c, ...: non-adjacent re-entry, so the runtime
; inflates), and holds it until that level returns. Each level writes its
; number into its frame on the way down and reads it back on the way up.
;
; The invariant: every level was visited once and found its frame intact,
; and every lock level counted once under its lock: n * K levels and
; n * floor(K / 128) locked increments.
;
; A depth that fits passes (the default K = 2000 needs about 1.2 MB of
; stack). A depth that does not fit overflows: the entry check of the level
; that finds no room for the shadow zone reports it, the thread's run() is
; abandoned and every lock it held is released:
;
;   jitlock-run --threads 4 examples/deep.ll                       exit 0
;   jitlock-run --threads 2 --iterations 100000000 examples/deep.ll
;       -> "stack overflow in run() on thread 0 ...", exit 3

%Object = type { i64, i64 }   ; header (1 = unlocked), count

; Thread tid uses locks[3 * (tid % 8)] .. locks[3 * (tid % 8) + 2].
@locks = global [24 x %Object] [
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }
]

; Levels visited, and levels that found their frame overwritten, by all
; threads.
@levels = global i64 0
@corrupted = global i64 0

; K, the recursion depth; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 2000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; Writes `level` into frame[level % 64]. Not inlined: the frame escapes, so
; it keeps all of its 512 bytes.
define void @fill(ptr %frame, i64 %level) noinline {
entry:
  %i = urem i64 %level, 64
  %slot = getelementptr inbounds [64 x i64], ptr %frame, i64 0, i64 %i
  store volatile i64 %level, ptr %slot
  ret void
}

; After the deeper levels returned: frame[level % 64] still holds `level`.
define void @verify(ptr %frame, i64 %level) {
entry:
  %i = urem i64 %level, 64
  %slot = getelementptr inbounds [64 x i64], ptr %frame, i64 0, i64 %i
  %v = load volatile i64, ptr %slot
  %bad = icmp ne i64 %v, %level
  br i1 %bad, label %corrupt, label %done

corrupt:
  atomicrmw add ptr @corrupted, i64 1 monotonic
  br label %done

done:
  ret void
}

;   void descend(Object[] set, long level, long depth) {   // stack-checked
;     long frame[64];
;     fill(frame, level);
;     if (level % 128 == 0) {
;       Object o = set[(level / 128) % 3];
;       synchronized (o) {
;         o.count++;
;         if (level < depth) descend(set, level + 1, depth);
;         verify(frame, level);
;       }
;     } else {
;       if (level < depth) descend(set, level + 1, depth);
;       verify(frame, level);
;     }
;   }
define void @descend(ptr %set, i64 %level, i64 %depth) "jitlock-stack-bang" {
entry:
  %frame = alloca [64 x i64]
  call void @fill(ptr %frame, i64 %level)
  atomicrmw add ptr @levels, i64 1 monotonic
  %deeper = icmp slt i64 %level, %depth
  %level.next = add i64 %level, 1
  %phase = urem i64 %level, 128
  %lock.level = icmp eq i64 %phase, 0
  br i1 %lock.level, label %locked, label %plain

locked:
  %turn = udiv i64 %level, 128
  %which = urem i64 %turn, 3
  %obj = getelementptr inbounds %Object, ptr %set, i64 %which
  call void @jitlock.monitor.enter(ptr %obj)
  %count.addr = getelementptr inbounds %Object, ptr %obj, i32 0, i32 1
  %count = load i64, ptr %count.addr
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  br i1 %deeper, label %locked.call, label %locked.done

locked.call:
  call void @descend(ptr %set, i64 %level.next, i64 %depth)
  br label %locked.done

locked.done:
  call void @verify(ptr %frame, i64 %level)
  call void @jitlock.monitor.exit(ptr %obj)
  ret void

plain:
  br i1 %deeper, label %plain.call, label %plain.done

plain.call:
  call void @descend(ptr %set, i64 %level.next, i64 %depth)
  br label %plain.done

plain.done:
  call void @verify(ptr %frame, i64 %level)
  ret void
}

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %slot = urem i64 %tid, 8
  %first = mul i64 %slot, 3
  %set = getelementptr inbounds [24 x %Object], ptr @locks, i64 0, i64 %first
  %depth = load i64, ptr @jitlock_example_iterations
  %any = icmp sgt i64 %depth, 0
  br i1 %any, label %go, label %done

go:
  call void @descend(ptr %set, i64 1, i64 %depth)
  br label %done

done:
  ret i64 %depth
}

; The counts of all 24 objects, each read under its lock.
define i64 @lock_count() {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %sum = phi i64 [ 0, %entry ], [ %sum.next, %body ]
  %more = icmp ult i64 %i, 24
  br i1 %more, label %body, label %done

body:
  %obj = getelementptr inbounds [24 x %Object], ptr @locks, i64 0, i64 %i
  call void @jitlock.monitor.enter(ptr %obj)
  %count.addr = getelementptr inbounds %Object, ptr %obj, i32 0, i32 1
  %count = load i64, ptr %count.addr
  call void @jitlock.monitor.exit(ptr %obj)
  %sum.next = add i64 %sum, %count
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %sum
}

; Levels visited by all threads.
define i64 @jitlock_example_result() {
entry:
  %levels = load atomic i64, ptr @levels monotonic, align 8
  ret i64 %levels
}

; 0 iff the invariant holds. Bit 1: levels visited; bit 2: frames
; corrupted; bit 4: locked increments.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %k.pos = call i64 @llvm.smax.i64(i64 %k, i64 0)
  %levels.expected = mul i64 %nthreads, %k.pos
  %per.thread = udiv i64 %k.pos, 128
  %locks.expected = mul i64 %nthreads, %per.thread

  %levels = load atomic i64, ptr @levels monotonic, align 8
  %levels.bad = icmp ne i64 %levels, %levels.expected
  %corrupted = load atomic i64, ptr @corrupted monotonic, align 8
  %corrupted.bad = icmp ne i64 %corrupted, 0
  %locks = call i64 @lock_count()
  %locks.bad = icmp ne i64 %locks, %locks.expected

  %b1 = zext i1 %levels.bad to i64
  %b2 = select i1 %corrupted.bad, i64 2, i64 0
  %b4 = select i1 %locks.bad, i64 4, i64 0
  %r1 = or i64 %b1, %b2
  %r2 = or i64 %r1, %b4
  ret i64 %r2
}

declare i64 @llvm.smax.i64(i64, i64)
