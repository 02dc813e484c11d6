; thread=arg under the default pipeline. The lowering runs at the start of the
; pipeline, so the marked parameter is already used (loaded from, stored
; through, stored into a monitor's owner word, passed to the runtime) when
; FunctionAttrs looks at it: nothing may infer readnone, readonly, writeonly
; or nocapture on it, or a memory(...) effect on the function that excludes
; those accesses. (This used to fail: the lowering ran at OptimizerLast, after
; FunctionAttrs had marked the then unused parameter `nocapture readnone`.)
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s > %t.ll
; RUN: FileCheck %s < %t.ll
; RUN: FileCheck %s --check-prefix=NEG < %t.ll
; The same at O1 and O3.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O1>' \
; RUN:   -S %s | FileCheck %s --check-prefix=NEG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O3>' \
; RUN:   -S %s | FileCheck %s --check-prefix=NEG

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @f(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"arg"}

; Only attributes that stay true of the lowered body may be on %t.
; CHECK-LABEL: define void @f(ptr {{(noundef |nonnull |align [0-9]+ |dereferenceable\([0-9]+\) )*}}"jitlock.thread" %t, ptr {{.*}}%o)
; CHECK-SAME:    [[ATTRS:#[0-9]+]]
; CHECK:         %jitlock.top = load atomic i32, ptr %t monotonic
; CHECK:         store atomic ptr %o, ptr %jitlock.slot monotonic
; CHECK:         store atomic i32 %jitlock.top.next, ptr %t monotonic
; CHECK:         %jitlock.self = ptrtoint ptr %t to i64
; CHECK:         cmpxchg ptr %jitlock.owner.addr, i64 0, i64 %jitlock.self acquire monotonic
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr {{(nonnull )?}}%t, ptr
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr {{(nonnull )?}}%t, ptr
; CHECK:       attributes [[ATTRS]] = {
; CHECK-NOT:     memory(
; CHECK-SAME:    }

; NEG-NOT: {{(readnone|readonly|writeonly|nocapture)[^,]*"jitlock.thread"}}
; NEG:     define void @f(
; NEG-NOT: {{(readnone|readonly|writeonly|nocapture)[^,]*"jitlock.thread"}}
