; A hand-made regression input in the jitlock-fuzz convention, replayed in
; the standard configurations (lowerings, thread modes, optimization levels
; around the lowering, stack-bang modes, a safepoint thread):
;
; RUN: %jitlock-fuzz --replay=%s | FileCheck %s
; CHECK-COUNT-6: replay javac-unwind-reentry.ll {{.*}}: ok
;
; Per iteration i of each thread:
;
;   synchronized (a) { a.n++;
;     synchronized (b) { b.n++;
;       synchronized (a) { a.n++;       // non-adjacent re-entry [a b a]
;         thrower(i);                   // throws when i % 3 == 0: the
;       } }                             // landing pad exits a, b (javac's
;     deep(a, 10);                      // cleanup), the caller catches
;     a.wait(50 us);                    // 11 more holds of a: the lock
;   }                                   // stack (8 slots) overflows
;
; so that per thread a.n = 60 * 2 + 40 * 11 and b.n = 60, and run() returns
; the 20 exceptions it caught.

%Obj = type { i64, i64 } ; header (1 = unlocked), counter

@a = global %Obj { i64 1, i64 0 }
@b = global %Obj { i64 1, i64 0 }
@errors = global i64 0

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @jitlock.thread()
declare ptr @jitlock_rt_current()
declare i32 @jitlock_rt_wait_timed(ptr, ptr, i64)
declare ptr @__cxa_allocate_exception(i64)
declare void @__cxa_throw(ptr, ptr, ptr)
declare ptr @__cxa_begin_catch(ptr)
declare void @__cxa_end_catch()
declare i32 @__gxx_personality_v0(...)
@_ZTIl = external constant ptr

define void @increment(ptr %o) {
  %n.addr = getelementptr inbounds %Obj, ptr %o, i32 0, i32 1
  %n = load i64, ptr %n.addr
  %n.next = add i64 %n, 1
  store i64 %n.next, ptr %n.addr
  ret void
}

define void @thrower(ptr "jitlock.thread" %self, i64 %i) {
entry:
  %r = urem i64 %i, 3
  %throw = icmp eq i64 %r, 0
  br i1 %throw, label %raise, label %done
raise:
  %x = call ptr @__cxa_allocate_exception(i64 8)
  store i64 %i, ptr %x
  call void @__cxa_throw(ptr %x, ptr @_ZTIl, ptr null)
  unreachable
done:
  ret void
}

define void @deep(ptr "jitlock.thread" %self, ptr %o, i64 %d) "jitlock-stack-bang" {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @increment(ptr %o)
  %more = icmp sgt i64 %d, 0
  br i1 %more, label %recurse, label %done
recurse:
  %d.next = sub i64 %d, 1
  call void @deep(ptr %self, ptr %o, i64 %d.next)
  br label %done
done:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @body(ptr "jitlock.thread" %self, i64 %i) noinline personality ptr @__gxx_personality_v0 {
entry:
  call void @jitlock.monitor.enter(ptr @a)
  call void @increment(ptr @a)
  call void @jitlock.monitor.enter(ptr @b)
  call void @increment(ptr @b)
  call void @jitlock.monitor.enter(ptr @a)
  call void @increment(ptr @a)
  invoke void @thrower(ptr %self, i64 %i) to label %cont unwind label %cleanup
cont:
  call void @jitlock.monitor.exit(ptr @a)
  call void @jitlock.monitor.exit(ptr @b)
  call void @deep(ptr %self, ptr @a, i64 10)
  %t = call ptr @jitlock.thread()
  %rc = call i32 @jitlock_rt_wait_timed(ptr %t, ptr @a, i64 50000)
  %ok = icmp eq i32 %rc, 0
  %late = icmp eq i32 %rc, 4
  %fine = or i1 %ok, %late
  br i1 %fine, label %leave, label %error
error:
  %ignored = atomicrmw add ptr @errors, i64 1 seq_cst
  br label %leave
leave:
  call void @jitlock.monitor.exit(ptr @a)
  ret void
cleanup:
  %lp = landingpad { ptr, i32 } cleanup
  call void @jitlock.monitor.exit(ptr @a)
  call void @jitlock.monitor.exit(ptr @b)
  call void @jitlock.monitor.exit(ptr @a)
  resume { ptr, i32 } %lp
}

define i64 @jitlock_example_run(i64 %tid, i64 %n) personality ptr @__gxx_personality_v0 {
entry:
  %self = call ptr @jitlock_rt_current()
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %next ]
  %caught = phi i64 [ 0, %entry ], [ %caught.next, %next ]
  %more = icmp ult i64 %i, 60
  br i1 %more, label %call, label %done
call:
  invoke void @body(ptr %self, i64 %i) to label %normal unwind label %catch
normal:
  br label %next
catch:
  %lp = landingpad { ptr, i32 } catch ptr @_ZTIl
  %exn = extractvalue { ptr, i32 } %lp, 0
  %payload = call ptr @__cxa_begin_catch(ptr %exn)
  call void @__cxa_end_catch()
  br label %next
next:
  %got = phi i64 [ 0, %normal ], [ 1, %catch ]
  %caught.next = add i64 %caught, %got
  %i.next = add i64 %i, 1
  br label %loop
done:
  ret i64 %caught
}

; 0 iff a.n = 560 n, b.n = 60 n and no wait failed.
define i64 @jitlock_example_check(i64 %n) {
  %a.n = load i64, ptr getelementptr inbounds (%Obj, ptr @a, i32 0, i32 1)
  %b.n = load i64, ptr getelementptr inbounds (%Obj, ptr @b, i32 0, i32 1)
  %a.want = mul i64 %n, 560
  %b.want = mul i64 %n, 60
  %a.bad = icmp ne i64 %a.n, %a.want
  %b.bad = icmp ne i64 %b.n, %b.want
  %errors = load atomic i64, ptr @errors seq_cst, align 8
  %e.bad = icmp ne i64 %errors, 0
  %r1 = or i1 %a.bad, %b.bad
  %r2 = or i1 %r1, %e.bad
  %r = zext i1 %r2 to i64
  ret i64 %r
}
