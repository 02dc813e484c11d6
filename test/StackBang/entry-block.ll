; The check goes at the very start of the entry block, after the static
; allocas only (and the thread, which jitlock-lower-thread materializes at
; the top): those must stay in the entry block to stay part of the fixed
; frame, so static allocas further down move up above the check as well. A
; dynamic alloca stays where it was. With monitor operations too, the thread
; that both need is materialized once.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -S %s | FileCheck %s

declare void @work(ptr)
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @allocas(i64 %n) "jitlock-stack-bang" {
entry:
  %a = alloca [16 x i64]
  call void @work(ptr %a)
  %b = alloca i64
  %dyn = alloca i8, i64 %n
  call void @work(ptr %b)
  call void @work(ptr %dyn)
  ret void
}

; CHECK-LABEL: define void @allocas(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    %a = alloca [16 x i64]
; CHECK-NEXT:    %b = alloca i64
; CHECK-NEXT:    %jitlock.sp.addr = call ptr @llvm.stacksave.p0()
; CHECK:         br i1 %jitlock.above.watermark, label %jitlock.bang.done, label %jitlock.bang.slow
; CHECK:       jitlock.bang.done:
; CHECK-NEXT:    call void @work(ptr %a)
; CHECK-NEXT:    %dyn = alloca i8, i64 %n
; CHECK-NEXT:    call void @work(ptr %b)

define void @synchronized(ptr %o) "jitlock-stack-bang" {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @work(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @synchronized(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         %jitlock.watermark.addr = getelementptr i8, ptr %jitlock.thread, i64 24
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:       jitlock.bang.done:
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o)
; CHECK:       }
