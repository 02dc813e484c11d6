; The deopt shapes of DeoptTest.cpp, each as three functions a frontend with
; lock elision would produce:
;
;   @<shape>.opt   the optimized version: some locks elided, a deopt point
;                  (llvm.experimental.deoptimize when %x != 0) whose "deopt"
;                  bundle ends with the frame's monitor group: i32 0x4a4c4d31
;                  (1246514481), i32 N, then N pairs (ptr, i32 0 held / 1
;                  elided), outermost first;
;   @<shape>.base  the baseline, nothing elided (the JIT's pipeline runs
;                  jitlock-elide, which keeps what @unelided hides): it
;                  calls %probe where the
;                  optimized version deoptimizes, so that the test can compare
;                  the lock state there with the restored one;
;   @<shape>.cont  the baseline from the deopt point on: it receives the
;                  bundle's frontend operands (a, b, c, x) and unlocks what is
;                  held there with the ordinary exits.
;
; Objects are { i64 header, i64 count }; each shape adds 1 to a's count at
; the deopt point, inside the locks, and returns x + 1 when it deopts.

%Object = type { i64, i64 }

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare i64 @llvm.experimental.deoptimize.i64(...)

; The baselines' re-entries go through this, so that jitlock-elide, which
; runs in the JIT's O2 pipeline, sees another value and keeps them.
define internal ptr @unelided(ptr %o) noinline {
  ret ptr %o
}

define internal void @bump(ptr %o) {
  %p = getelementptr %Object, ptr %o, i32 0, i32 1
  %v = load i64, ptr %p
  %w = add i64 %v, 1
  store i64 %w, ptr %p
  ret void
}

; reorder: sync(a) { sync(b) { sync(c) { POINT } } }, b elided: the
; optimized lock stack [a c] becomes [a b c].
define i64 @reorder.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %c)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 3, ptr %a, i32 0, ptr %b, i32 1, ptr %c, i32 0) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %c)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @reorder.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %c)
  call void %probe()
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %c)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}
define i64 @reorder.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %c)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}

; nested: sync(a) { sync(b) { POINT } }, the inner b elided inside the kept a.
define i64 @nested.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 2, ptr %a, i32 0, ptr %b, i32 1) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @nested.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void %probe()
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}
define i64 @nested.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}

; outer: sync(b) { sync(a) { POINT } }, the outer b elided around the kept
; a: relocking b must not leave it above a ([a b] would be out of order).
define i64 @outer.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 2, ptr %b, i32 1, ptr %a, i32 0) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @outer.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %a)
  call void %probe()
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  %r = add i64 %x, 1
  ret i64 %r
}
define i64 @outer.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  %r = add i64 %x, 1
  ret i64 %r
}

; recursive: sync(a) { sync(a) { sync(a) { POINT } } }, the two re-entries
; elided: [a] becomes [a a a], recursion by adjacency.
define i64 @recursive.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 3, ptr %a, i32 0, ptr %a, i32 1, ptr %a, i32 1) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @recursive.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
  %a2 = call ptr @unelided(ptr %a)
  %a3 = call ptr @unelided(ptr %a)
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %a2)
  call void @jitlock.monitor.enter(ptr %a3)
  call void %probe()
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a3)
  call void @jitlock.monitor.exit(ptr %a2)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}
define i64 @recursive.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}

; atenter: sync(a) { sync(b) { sync(a) { POINT } } } with b elided; the
; deopt is at the inner enter of a, before it: the frame holds [a H, b E]
; and the baseline continues with that enter, a non-adjacent re-entry
; ([a b a]) that inflates a in either version.
define i64 @atenter.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 2, ptr %a, i32 0, ptr %b, i32 1) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @atenter.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void %probe()
  %a2 = call ptr @unelided(ptr %a)
  call void @jitlock.monitor.enter(ptr %a2)
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a2)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}
; The continuation's own enter is a nested block of its own (jitlock-verify
; pairs an exit with an enter of the same function).
define internal void @atenter.inner(ptr %a) noinline {
  call void @jitlock.monitor.enter(ptr %a)
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}
define i64 @atenter.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @atenter.inner(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}

; full: ten objects a[0..9] locked one inside the other, a[0], a[4] and a[9]
; kept and the others elided: restoring fills the 8 slots and inflates.
define i64 @full.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  %o1 = getelementptr %Object, ptr %a, i64 1
  %o2 = getelementptr %Object, ptr %a, i64 2
  %o3 = getelementptr %Object, ptr %a, i64 3
  %o4 = getelementptr %Object, ptr %a, i64 4
  %o5 = getelementptr %Object, ptr %a, i64 5
  %o6 = getelementptr %Object, ptr %a, i64 6
  %o7 = getelementptr %Object, ptr %a, i64 7
  %o8 = getelementptr %Object, ptr %a, i64 8
  %o9 = getelementptr %Object, ptr %a, i64 9
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %o4)
  call void @jitlock.monitor.enter(ptr %o9)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 10, ptr %a, i32 0, ptr %o1, i32 1, ptr %o2, i32 1, ptr %o3, i32 1, ptr %o4, i32 0, ptr %o5, i32 1, ptr %o6, i32 1, ptr %o7, i32 1, ptr %o8, i32 1, ptr %o9, i32 0) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %o9)
  call void @jitlock.monitor.exit(ptr %o4)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @full.base(ptr %a, ptr %b, ptr %c, i64 %x, ptr %probe) {
entry:
  br label %enter
enter:
  %i = phi i64 [ 0, %entry ], [ %i1, %enter ]
  %o = getelementptr %Object, ptr %a, i64 %i
  call void @jitlock.monitor.enter(ptr %o)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 10
  br i1 %more, label %enter, label %point
point:
  call void %probe()
  call void @bump(ptr %a)
  br label %exit
exit:
  %j = phi i64 [ 9, %point ], [ %j1, %exit ]
  %p = getelementptr %Object, ptr %a, i64 %j
  call void @jitlock.monitor.exit(ptr %p)
  %j1 = sub i64 %j, 1
  %again = icmp sge i64 %j1, 0
  br i1 %again, label %exit, label %out
out:
  %r = add i64 %x, 1
  ret i64 %r
}
define i64 @full.cont(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  call void @bump(ptr %a)
  br label %exit
exit:
  %j = phi i64 [ 9, %entry ], [ %j1, %exit ]
  %p = getelementptr %Object, ptr %a, i64 %j
  call void @jitlock.monitor.exit(ptr %p)
  %j1 = sub i64 %j, 1
  %again = icmp sge i64 %j1, 0
  br i1 %again, label %exit, label %out
out:
  %r = add i64 %x, 1
  ret i64 %r
}

; local: an object on the optimized frame's stack (it never escapes, so its
; lock is elided), with the constant 123456789012 as a frontend operand: the
; object's location is Direct, the constant's ConstantIndex. The continuation
; runs on top of the optimized frame, so the object is still there.
define i64 @local.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
entry:
  %l = alloca %Object, align 16
  store i64 1, ptr %l
  %lc = getelementptr %Object, ptr %l, i32 0, i32 1
  store i64 0, ptr %lc
  call void @jitlock.monitor.enter(ptr %a)
  %d = icmp ne i64 %x, 0
  br i1 %d, label %deopt, label %done
deopt:
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %l, i64 123456789012, i64 %x, i32 1246514481, i32 2, ptr %a, i32 0, ptr %l, i32 1) ]
  ret i64 %r
done:
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret i64 %x
}
define i64 @local.cont(ptr %a, ptr %l, i64 %k, i64 %x) {
  call void @bump(ptr %a)
  call void @jitlock.monitor.exit(ptr %l)
  call void @jitlock.monitor.exit(ptr %a)
  %r = add i64 %x, 1
  ret i64 %r
}

; lying: the group says c is held, but the frame never entered it: the
; restore is refused and the frame's held monitors are released.
define i64 @lying.opt(ptr %a, ptr %b, ptr %c, i64 %x) {
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  %r = call i64 (...) @llvm.experimental.deoptimize.i64() [ "deopt"(ptr %a, ptr %b, ptr %c, i64 %x, i32 1246514481, i32 3, ptr %a, i32 0, ptr %b, i32 0, ptr %c, i32 0) ]
  ret i64 %r
}

