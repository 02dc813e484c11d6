; counter.ll - one shared counter, N threads x K increments.
;
; What a frontend emits for
;
;   class Counter { long value; }
;   static final Counter counter = new Counter();
;
;   static long run(long tid, long nthreads) {
;     for (long i = 0; i < ITERATIONS; i++)
;       synchronized (counter) { counter.value++; }
;     return ITERATIONS;
;   }
;
; The invariant: after N threads finish, value == N * K. The increment is a
; plain load and store: only the monitor keeps updates from being lost.
;
; Run: jitlock-run --threads 4 examples/counter.ll

; An object: the 64-bit header first (1 = unlocked, no hash), then fields.
%Counter = type { i64, i64 }   ; header, value

@counter = global %Counter { i64 1, i64 0 }

; K, the increments per thread; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 200000

; The jitlock contract: declared, never defined.
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; Each thread: K times, synchronized (counter) { counter.value++; }
define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %body, label %done

body:
  call void @jitlock.monitor.enter(ptr @counter)
  %value.addr = getelementptr inbounds %Counter, ptr @counter, i32 0, i32 1
  %value = load i64, ptr %value.addr
  %value.next = add i64 %value, 1
  store i64 %value.next, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @counter)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %i
}

; The value, read under the lock.
define i64 @jitlock_example_result() {
entry:
  call void @jitlock.monitor.enter(ptr @counter)
  %value.addr = getelementptr inbounds %Counter, ptr @counter, i32 0, i32 1
  %value = load i64, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @counter)
  ret i64 %value
}

; 0 iff value == nthreads * K.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %expected = mul i64 %nthreads, %k
  %value = call i64 @jitlock_example_result()
  %ok = icmp eq i64 %value, %expected
  %status = select i1 %ok, i64 0, i64 1
  ret i64 %status
}
