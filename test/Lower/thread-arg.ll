; thread=arg: the current thread is the parameter the frontend marked with
; the "jitlock.thread" attribute; nothing is computed and nothing is called.
; The mode comes from the pass parameter or from the jitlock.thread module
; flag (see module-flags.ll).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %s | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

define void @first(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @work()
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; Any position.
define void @last(ptr %o, i32 %n, ptr "jitlock.thread" %self) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @first(ptr "jitlock.thread" %t, ptr %o) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK:         %jitlock.top = load atomic i32, ptr %t monotonic, align 4
; CHECK:         %jitlock.slot = getelementptr i8, ptr %t, i64
; CHECK:         %jitlock.self = ptrtoint ptr %t to i64
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %t, ptr %o)
; CHECK:         call void @work()
; CHECK:         %jitlock.top{{[0-9]+}} = load atomic i32, ptr %t monotonic, align 4
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %t, ptr %o)
; CHECK:         ret void
; CHECK-NEXT:  }

; CHECK-LABEL: define void @last(ptr %o, i32 %n, ptr "jitlock.thread" %self) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %self, ptr %o)
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %self, ptr %o)

; CHECK-NOT:   @llvm.thread.pointer
; CHECK-NOT:   @jitlock_rt_code_thread
; CHECK-NOT:   @jitlock.thread(
