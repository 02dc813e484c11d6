; mixed.ll - the LLVM tier of the mixed-tier test (MixedTierTest.cpp).
;
; What a frontend's optimizing tier emits for three critical-section shapes,
; run by some threads while other threads run the same shapes compiled by
; the asmjit emitters, on the same objects. The counters are plain loads and
; stores: only the monitors keep increments from being lost.

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; n times: synchronized (o) { *c += 1; }
define void @mixed_simple(ptr %o, ptr %c, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %done

body:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i64, ptr %c
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret void
}

; n times: synchronized (o) { synchronized (o) { *c += 1; } }
define void @mixed_recursive(ptr %o, ptr %c, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %done

body:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i64, ptr %c
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret void
}

; n times: synchronized (a) { synchronized (b) { *ca += 1; *cb += 1; } }
define void @mixed_nested(ptr %a, ptr %b, ptr %ca, ptr %cb, i64 %n) {
entry:
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %body, label %done

body:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  %va = load i64, ptr %ca
  %va.next = add i64 %va, 1
  store i64 %va.next, ptr %ca
  %vb = load i64, ptr %cb
  %vb.next = add i64 %vb, 1
  store i64 %vb.next, ptr %cb
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret void
}

; synchronized (o) { fn(arg); } - holds o while the test's callback runs.
define void @mixed_hold(ptr %o, ptr %fn, ptr %arg) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void %fn(ptr %arg)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
