; thread=call, the default of the opt plugin (code lowered by opt runs in
; another process, so nothing process-specific is assumed): one call to
; jitlock_rt_code_thread() at the top of the entry block, per function.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -S %s | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @loop(ptr %o, i32 %n) {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i.next, %body ]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %out
body:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  %i.next = add i32 %i, 1
  br label %head
out:
  ret void
}

; CHECK-LABEL: define void @loop(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    br label %head
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         ret void
; CHECK-NEXT:  }

; CHECK-NOT:   @llvm.thread.pointer
; CHECK:       declare ptr @jitlock_rt_code_thread() [[PURE:#[0-9]+]]
; CHECK:       attributes [[PURE]] = { nounwind willreturn memory(none) }
