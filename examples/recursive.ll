; recursive.ll - recursive and nested locking, every shape the lock stack
; has to handle:
;
;   1. adjacent re-entry      synchronized (own) { synchronized (own) { .. } }
;                             the lock stack holds [own own]: a push, no CAS
;   2. non-adjacent re-entry  synchronized (a) { synchronized (shared) {
;                               synchronized (a) { .. } } }
;                             [a shared a] cannot be expressed: a is inflated
;   3. recursion              a recursive method, synchronized on one object,
;                             12 calls deep: more entries than the 8 slots of
;                             the lock stack, so the runtime inflates the
;                             oldest entry
;   4. nesting                12 distinct objects locked one inside the other
;                             by a recursive function, in a fixed order
;
; Objects of shapes 1-3 are per thread (slot tid % 16), so without contention
; the shapes, not other threads, decide what inflates; shape 2's `shared` and
; shape 4's chain are shared by every thread.
;
; The invariant: every increment, made with the lock held, is counted once:
; the counts add up to N * K per shape (12 * N * K for shape 3).
;
; Run: jitlock-run --threads 4 examples/recursive.ll

%Object = type { i64, i64 }   ; header (1 = unlocked), count

; Shape 1: thread tid uses own[tid % 16]; never contended for N <= 16.
@own = global [16 x %Object] [
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }
]

; Shape 2: thread tid's `a` is aba[tid % 16]; `shared` is everybody's.
@aba = global [16 x %Object] [
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }
]
@shared = global %Object { i64 1, i64 0 }

; Shape 3: thread tid recurses on deep[tid % 16].
@deep = global [16 x %Object] [
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }
]

; Shape 4: locked chain[0], chain[1], ... chain[11], always in that order.
@chain = global [12 x %Object] [
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 },
  %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }, %Object { i64 1, i64 0 }
]

; K, the rounds per thread; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 10000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; obj.count++, called with obj locked.
define void @increment(ptr %obj) {
entry:
  %count.addr = getelementptr inbounds %Object, ptr %obj, i32 0, i32 1
  %count = load i64, ptr %count.addr
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  ret void
}

; Shape 3:
;   synchronized void recurse(Object obj, long depth) {
;     if (depth > 1) recurse(obj, depth - 1);
;     obj.count++;
;   }
define void @recurse(ptr %obj, i64 %depth) {
entry:
  call void @jitlock.monitor.enter(ptr %obj)
  %deeper = icmp sgt i64 %depth, 1
  br i1 %deeper, label %call, label %body

call:
  %depth.next = sub i64 %depth, 1
  call void @recurse(ptr %obj, i64 %depth.next)
  br label %body

body:
  call void @increment(ptr %obj)
  call void @jitlock.monitor.exit(ptr %obj)
  ret void
}

; Shape 4:
;   void nest(long i) {
;     synchronized (chain[i]) {
;       if (i + 1 < 12) nest(i + 1);
;       chain[i].count++;
;     }
;   }
define void @nest(i64 %i) {
entry:
  %obj = getelementptr inbounds [12 x %Object], ptr @chain, i64 0, i64 %i
  call void @jitlock.monitor.enter(ptr %obj)
  %next = add i64 %i, 1
  %deeper = icmp ult i64 %next, 12
  br i1 %deeper, label %call, label %body

call:
  call void @nest(i64 %next)
  br label %body

body:
  call void @increment(ptr %obj)
  call void @jitlock.monitor.exit(ptr %obj)
  ret void
}

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %slot = urem i64 %tid, 16
  %own = getelementptr inbounds [16 x %Object], ptr @own, i64 0, i64 %slot
  %a = getelementptr inbounds [16 x %Object], ptr @aba, i64 0, i64 %slot
  %deep = getelementptr inbounds [16 x %Object], ptr @deep, i64 0, i64 %slot
  %k = load i64, ptr @jitlock_example_iterations
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %round ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %round, label %done

round:
  ; 1. synchronized (own) { synchronized (own) { own.count++; } }
  call void @jitlock.monitor.enter(ptr %own)
  call void @jitlock.monitor.enter(ptr %own)
  call void @increment(ptr %own)
  call void @jitlock.monitor.exit(ptr %own)
  call void @jitlock.monitor.exit(ptr %own)

  ; 2. synchronized (a) { synchronized (shared) { synchronized (a) {
  ;      a.count++; shared.count++; } } }
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr @shared)
  call void @jitlock.monitor.enter(ptr %a)
  call void @increment(ptr %a)
  call void @increment(ptr @shared)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr @shared)
  call void @jitlock.monitor.exit(ptr %a)

  ; 3. twelve recursive synchronized calls on one object
  call void @recurse(ptr %deep, i64 12)

  ; 4. twelve distinct objects, nested
  call void @nest(i64 0)

  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %i
}

; The counts of `n` objects laid out as an array, each read under its lock.
define i64 @sum_counts(ptr %array, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %sum = phi i64 [ 0, %entry ], [ %sum.next, %body ]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %done

body:
  %obj = getelementptr inbounds %Object, ptr %array, i64 %i
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

; Every increment of every shape: N * K * (1 + 2 + 12 + 12).
define i64 @jitlock_example_result() {
entry:
  %own = call i64 @sum_counts(ptr @own, i64 16)
  %aba = call i64 @sum_counts(ptr @aba, i64 16)
  %shared = call i64 @sum_counts(ptr @shared, i64 1)
  %deep = call i64 @sum_counts(ptr @deep, i64 16)
  %chain = call i64 @sum_counts(ptr @chain, i64 12)
  %s1 = add i64 %own, %aba
  %s2 = add i64 %s1, %shared
  %s3 = add i64 %s2, %deep
  %s4 = add i64 %s3, %chain
  ret i64 %s4
}

; 0 iff every shape counted N * K rounds. Bit i set means shape i is off:
; 1 own, 2 aba, 4 shared, 8 deep, 16 some chain link.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %rounds = mul i64 %nthreads, %k
  %deep.expected = mul i64 %rounds, 12

  %own = call i64 @sum_counts(ptr @own, i64 16)
  %own.bad = icmp ne i64 %own, %rounds
  %aba = call i64 @sum_counts(ptr @aba, i64 16)
  %aba.bad = icmp ne i64 %aba, %rounds
  %shared = call i64 @sum_counts(ptr @shared, i64 1)
  %shared.bad = icmp ne i64 %shared, %rounds
  %deep = call i64 @sum_counts(ptr @deep, i64 16)
  %deep.bad = icmp ne i64 %deep, %deep.expected
  br label %links

  ; Every link of the chain was locked once per round.
links:
  %i = phi i64 [ 0, %entry ], [ %i.next, %link ]
  %chain.bad = phi i1 [ false, %entry ], [ %chain.bad.next, %link ]
  %more = icmp ult i64 %i, 12
  br i1 %more, label %link, label %report

link:
  %obj = getelementptr inbounds [12 x %Object], ptr @chain, i64 0, i64 %i
  %count = call i64 @sum_counts(ptr %obj, i64 1)
  %link.bad = icmp ne i64 %count, %rounds
  %chain.bad.next = or i1 %chain.bad, %link.bad
  %i.next = add i64 %i, 1
  br label %links

report:
  %b1 = zext i1 %own.bad to i64
  %b2 = select i1 %aba.bad, i64 2, i64 0
  %b4 = select i1 %shared.bad, i64 4, i64 0
  %b8 = select i1 %deep.bad, i64 8, i64 0
  %b16 = select i1 %chain.bad, i64 16, i64 0
  %r1 = or i64 %b1, %b2
  %r2 = or i64 %r1, %b4
  %r3 = or i64 %r2, %b8
  %r4 = or i64 %r3, %b16
  ret i64 %r4
}
