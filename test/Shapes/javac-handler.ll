; javac's shape of synchronized (o) { work(); }: the body and the normal exit
; are covered by a catch-all handler, and so is the handler's own exit, so
; that an exit that throws is retried:
;
;    4: invokestatic work         exception table: [4, 9)   -> 12 any
;    7: aload_2; monitorexit                       [12, 15) -> 12 any
;    9: goto 17
;   12: astore_3; aload_2; monitorexit
;   15: aload_3; athrow
;
; A frontend that makes every covered instruction an invoke gives the handler
; an invoke of the exit that unwinds to the handler itself. The exit never
; throws (the lowering turns the invoke into a call and drops the unwind
; edge), so no exception reaches the handler from an exit: the pattern is
; structured, and it verifies and lowers.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s 2>&1 | FileCheck %s --implicit-check-not='@jitlock.monitor'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s 2>&1 | FileCheck %s --check-prefix=O2 --implicit-check-not='@jitlock.monitor'

; QUIET-NOT: error

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare void @rethrow(ptr)
declare i32 @__gxx_personality_v0(...)

define void @sync(ptr %o) personality ptr @__gxx_personality_v0 {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  invoke void @work() to label %body.end unwind label %handler
body.end:
  invoke void @jitlock.monitor.exit(ptr %o) to label %done unwind label %handler
done:
  ret void
handler:
  %exn = landingpad { ptr, i32 } cleanup
  invoke void @jitlock.monitor.exit(ptr %o) to label %rethrow unwind label %handler
rethrow:
  resume { ptr, i32 } %exn
}

; Nested: synchronized (a) { synchronized (b) { work(); } }. The inner
; handler's rethrow (athrow) is covered by the outer handler, whose own exit
; is covered by itself.
define void @nested(ptr %a, ptr %b) personality ptr @__gxx_personality_v0 {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  invoke void @jitlock.monitor.enter(ptr %b) to label %inner unwind label %outer.handler
inner:
  invoke void @work() to label %inner.end unwind label %inner.handler
inner.end:
  invoke void @jitlock.monitor.exit(ptr %b) to label %outer.end unwind label %inner.handler
outer.end:
  invoke void @jitlock.monitor.exit(ptr %a) to label %done unwind label %outer.handler
done:
  ret void
inner.handler:
  %inner.exn = landingpad { ptr, i32 } catch ptr null
  invoke void @jitlock.monitor.exit(ptr %b) to label %inner.rethrow unwind label %inner.handler
inner.rethrow:
  %inner.obj = extractvalue { ptr, i32 } %inner.exn, 0
  invoke void @rethrow(ptr %inner.obj) to label %unreachable unwind label %outer.handler
outer.handler:
  %outer.exn = landingpad { ptr, i32 } catch ptr null
  invoke void @jitlock.monitor.exit(ptr %a) to label %outer.rethrow unwind label %outer.handler
outer.rethrow:
  %outer.obj = extractvalue { ptr, i32 } %outer.exn, 0
  call void @rethrow(ptr %outer.obj)
  unreachable
unreachable:
  unreachable
}

; The exits are calls now; the handler is reached from the body's invoke only.
; CHECK-LABEL: define void @sync(
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic
; CHECK:         invoke void @work()
; CHECK-NEXT:      to label %body.end unwind label %handler
; CHECK:       body.end:
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK:       handler:
; CHECK-SAME:    preds = %[[WORK:[a-z.0-9]+]]{{$}}
; CHECK-NEXT:    %exn = landingpad { ptr, i32 }
; CHECK-NEXT:      cleanup
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK:       rethrow:
; CHECK-NEXT:    resume { ptr, i32 } %exn

; CHECK-LABEL: define void @nested(
; CHECK-NOT:   invoke void @jitlock
; CHECK:       inner.handler:
; CHECK-SAME:    preds = %inner{{$}}
; CHECK:       outer.handler:
; CHECK-SAME:    preds = %inner.rethrow{{$}}

; O2-LABEL: define void @sync(
; O2:         invoke void @work()
; O2:         landingpad
; O2:         resume
; O2-LABEL: define void @nested(
; O2:         invoke void @work()
; O2:         landingpad
