; prodcons.ll - a bounded queue with wait and notifyAll; every item is
; consumed exactly once.
;
; What a frontend emits for
;
;   class Queue { long head, count; long[] slots = new long[2]; }
;
;   synchronized void put(long v) {           // on the queue
;     while (count == 2) wait();
;     slots[(head + count) % 2] = v; count++;
;     notifyAll();
;   }
;   synchronized long take() {
;     while (count == 0) wait();
;     long v = slots[head]; head = (head + 1) % 2; count--;
;     notifyAll();
;     return v;
;   }
;
; Each thread alternates: it puts one item of its own, then takes one item
; (anybody's) and records it in the tally. That works for any number of
; threads, 1 included, and cannot deadlock: a thread blocked in put has put
; and taken equally often, one blocked in take has put one more than it took,
; so the queue holds exactly as many items as there are threads in take:
; if every thread were blocked, the queue would be both full and empty.
; With more threads than the 2 slots, put does wait when the queue is full.
;
; wait and notifyAll are runtime calls that take the current thread, which
; the frontend asks for with @jitlock.thread(). wait inflates the monitor.
;
; The invariant: N * K items 1 .. N * K were put, and the tally saw each once:
; the count, the sum and the sum of squares all match, the queue is empty,
; and no runtime call failed.
;
; Run: jitlock-run --threads 4 examples/prodcons.ll

%Queue = type { i64, i64, i64, [2 x i64] }   ; header (1 = unlocked), head, count, slots
%Tally = type { i64, i64, i64, i64 }         ; header, taken, sum, sum of squares

@queue = global %Queue { i64 1, i64 0, i64 0, [2 x i64] zeroinitializer }
@tally = global %Tally { i64 1, i64 0, i64 0, i64 0 }

; Runtime calls that returned an error (atomic: guarded by no monitor).
@errors = global i64 0

; K, the items each thread puts; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 10000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @jitlock.thread()

; From include/jitlock/jitlock_rt.h: int f(jitlock_thread *self, void *obj).
declare i32 @jitlock_rt_wait(ptr, ptr)
declare i32 @jitlock_rt_notify_all(ptr, ptr)

; Returns true when `rc` is JITLOCK_OK, else counts an error.
define i1 @succeeded(i32 %rc) {
entry:
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %done, label %failed

failed:
  %ignored = atomicrmw add ptr @errors, i64 1 seq_cst
  br label %done

done:
  ret i1 %ok
}

; synchronized (queue) { while (count == 2) wait(); enqueue v; notifyAll(); }
; On a runtime error the item is dropped (and the check fails).
define void @put(i64 %v) {
entry:
  %head.addr = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 1
  %count.addr = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 2
  call void @jitlock.monitor.enter(ptr @queue)
  br label %guard

guard:
  %count = load i64, ptr %count.addr
  %full = icmp eq i64 %count, 2
  br i1 %full, label %wait, label %enqueue

wait:
  %self = call ptr @jitlock.thread()
  %wait.rc = call i32 @jitlock_rt_wait(ptr %self, ptr @queue)
  %wait.ok = call i1 @succeeded(i32 %wait.rc)
  br i1 %wait.ok, label %guard, label %unlock

enqueue:
  %head = load i64, ptr %head.addr
  %tail.unwrapped = add i64 %head, %count
  %tail = urem i64 %tail.unwrapped, 2
  %slot = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 3, i64 %tail
  store i64 %v, ptr %slot
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  %self.notify = call ptr @jitlock.thread()
  %notify.rc = call i32 @jitlock_rt_notify_all(ptr %self.notify, ptr @queue)
  %notify.ok = call i1 @succeeded(i32 %notify.rc)
  br label %unlock

unlock:
  call void @jitlock.monitor.exit(ptr @queue)
  ret void
}

; synchronized (queue) { while (count == 0) wait(); dequeue; notifyAll(); }
; Returns 0 (never an item) on a runtime error.
define i64 @take() {
entry:
  %head.addr = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 1
  %count.addr = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 2
  call void @jitlock.monitor.enter(ptr @queue)
  br label %guard

guard:
  %count = load i64, ptr %count.addr
  %empty = icmp eq i64 %count, 0
  br i1 %empty, label %wait, label %dequeue

wait:
  %self = call ptr @jitlock.thread()
  %wait.rc = call i32 @jitlock_rt_wait(ptr %self, ptr @queue)
  %wait.ok = call i1 @succeeded(i32 %wait.rc)
  br i1 %wait.ok, label %guard, label %unlock

dequeue:
  %head = load i64, ptr %head.addr
  %slot = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 3, i64 %head
  %item = load i64, ptr %slot
  %head.unwrapped = add i64 %head, 1
  %head.next = urem i64 %head.unwrapped, 2
  store i64 %head.next, ptr %head.addr
  %count.next = sub i64 %count, 1
  store i64 %count.next, ptr %count.addr
  %self.notify = call ptr @jitlock.thread()
  %notify.rc = call i32 @jitlock_rt_notify_all(ptr %self.notify, ptr @queue)
  %notify.ok = call i1 @succeeded(i32 %notify.rc)
  br label %unlock

unlock:
  %taken = phi i64 [ 0, %wait ], [ %item, %dequeue ]
  call void @jitlock.monitor.exit(ptr @queue)
  ret i64 %taken
}

; synchronized (tally) { taken++; sum += v; sumsq += v * v; }
define void @record(i64 %v) {
entry:
  %taken.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 1
  %sum.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 2
  %squares.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 3
  call void @jitlock.monitor.enter(ptr @tally)
  %taken = load i64, ptr %taken.addr
  %taken.next = add i64 %taken, 1
  store i64 %taken.next, ptr %taken.addr
  %sum = load i64, ptr %sum.addr
  %sum.next = add i64 %sum, %v
  store i64 %sum.next, ptr %sum.addr
  %square = mul i64 %v, %v
  %squares = load i64, ptr %squares.addr
  %squares.next = add i64 %squares, %square
  store i64 %squares.next, ptr %squares.addr
  call void @jitlock.monitor.exit(ptr @tally)
  ret void
}

; Thread tid puts items tid*K + 1 .. tid*K + K, taking one item after each.
define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %base = mul i64 %tid, %k
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %body, label %done

body:
  %i.next = add i64 %i, 1
  %item = add i64 %base, %i.next
  call void @put(i64 %item)
  %got = call i64 @take()
  call void @record(i64 %got)
  br label %loop

done:
  ret i64 %i
}

; The sum of the items taken.
define i64 @jitlock_example_result() {
entry:
  %sum.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 2
  call void @jitlock.monitor.enter(ptr @tally)
  %sum = load i64, ptr %sum.addr
  call void @jitlock.monitor.exit(ptr @tally)
  ret i64 %sum
}

; 0 iff items 1 .. N*K were each taken once. Bits: 1 count, 2 sum, 4 sum of
; squares, 8 queue not empty, 16 a runtime call failed.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %items = mul i64 %nthreads, %k
  br label %expect

  ; The expected sums, 1 + 2 + ... + M and 1 + 4 + ... + M*M, wrapping like
  ; the tally does.
expect:
  %v = phi i64 [ 1, %entry ], [ %v.next, %add ]
  %sum.want = phi i64 [ 0, %entry ], [ %sum.want.next, %add ]
  %squares.want = phi i64 [ 0, %entry ], [ %squares.want.next, %add ]
  %more = icmp sle i64 %v, %items
  br i1 %more, label %add, label %compare

add:
  %sum.want.next = add i64 %sum.want, %v
  %square = mul i64 %v, %v
  %squares.want.next = add i64 %squares.want, %square
  %v.next = add i64 %v, 1
  br label %expect

compare:
  %taken.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 1
  %sum.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 2
  %squares.addr = getelementptr inbounds %Tally, ptr @tally, i32 0, i32 3
  call void @jitlock.monitor.enter(ptr @tally)
  %taken = load i64, ptr %taken.addr
  %sum = load i64, ptr %sum.addr
  %squares = load i64, ptr %squares.addr
  call void @jitlock.monitor.exit(ptr @tally)

  %count.addr = getelementptr inbounds %Queue, ptr @queue, i32 0, i32 2
  call void @jitlock.monitor.enter(ptr @queue)
  %left = load i64, ptr %count.addr
  call void @jitlock.monitor.exit(ptr @queue)

  %errors = load atomic i64, ptr @errors seq_cst, align 8

  %taken.bad = icmp ne i64 %taken, %items
  %sum.bad = icmp ne i64 %sum, %sum.want
  %squares.bad = icmp ne i64 %squares, %squares.want
  %left.bad = icmp ne i64 %left, 0
  %errors.bad = icmp ne i64 %errors, 0
  %b1 = zext i1 %taken.bad to i64
  %b2 = select i1 %sum.bad, i64 2, i64 0
  %b4 = select i1 %squares.bad, i64 4, i64 0
  %b8 = select i1 %left.bad, i64 8, i64 0
  %b16 = select i1 %errors.bad, i64 16, i64 0
  %r1 = or i64 %b1, %b2
  %r2 = or i64 %r1, %b4
  %r3 = or i64 %r2, %b8
  %r4 = or i64 %r3, %b16
  ret i64 %r4
}
