; fib.ll - a call-heavy recursion with method-entry stack checks, for
; measuring the stack-bang modes.
;
; @fib is the naive doubly recursive Fibonacci, a "jitlock-stack-bang"
; function: every one of its calls runs the entry check. Each thread computes
; fib(K) (K = @jitlock_example_iterations, default 30: about 1.3 million
; calls) and adds it to a shared total under a lock.
;
; The invariant: the total is n * fib(K), with fib(K) computed again
; iteratively. The result printed is fib(K) (832040 for K = 30).
;
;   jitlock-run --threads 1 --stack-bang=watermark examples/fib.ll
;   jitlock-run --threads 1 --stack-bang=always examples/fib.ll
;   jitlock-run --threads 1 --stack-bang=none examples/fib.ll

%Object = type { i64, i64 }   ; header (1 = unlocked), total

@total = global %Object { i64 1, i64 0 }
@value = global i64 0

; K; jitlock-run --iterations N overrides it.
@jitlock_example_iterations = global i64 30

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

;   long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
define i64 @fib(i64 %n) "jitlock-stack-bang" {
entry:
  %small = icmp slt i64 %n, 2
  br i1 %small, label %base, label %recurse

base:
  ret i64 %n

recurse:
  %n1 = sub i64 %n, 1
  %f1 = call i64 @fib(i64 %n1)
  %n2 = sub i64 %n, 2
  %f2 = call i64 @fib(i64 %n2)
  %sum = add i64 %f1, %f2
  ret i64 %sum
}

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %f = call i64 @fib(i64 %k)
  store atomic i64 %f, ptr @value monotonic, align 8
  ; synchronized (total) { total.count += f; }
  call void @jitlock.monitor.enter(ptr @total)
  %total.addr = getelementptr inbounds %Object, ptr @total, i32 0, i32 1
  %total = load i64, ptr %total.addr
  %total.next = add i64 %total, %f
  store i64 %total.next, ptr %total.addr
  call void @jitlock.monitor.exit(ptr @total)
  ret i64 %f
}

; fib(k), iteratively.
define i64 @fib_loop(i64 %k) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %step ]
  %a = phi i64 [ 0, %entry ], [ %b, %step ]
  %b = phi i64 [ 1, %entry ], [ %ab, %step ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %step, label %done

step:
  %ab = add i64 %a, %b
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %a
}

define i64 @jitlock_example_result() {
entry:
  %f = load atomic i64, ptr @value monotonic, align 8
  ret i64 %f
}

; 0 iff the total is n * fib(K).
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %f = call i64 @fib_loop(i64 %k)
  %expected = mul i64 %nthreads, %f
  call void @jitlock.monitor.enter(ptr @total)
  %total.addr = getelementptr inbounds %Object, ptr @total, i32 0, i32 1
  %total = load i64, ptr %total.addr
  call void @jitlock.monitor.exit(ptr @total)
  %bad = icmp ne i64 %total, %expected
  %r = zext i1 %bad to i64
  ret i64 %r
}
