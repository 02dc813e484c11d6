; A frontend may call jitlock.thread() itself (to pass the thread to its own
; runtime calls). Every such call becomes the function's one thread value,
; in all three modes, whether or not the function has monitor operations,
; and the declaration disappears.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-96>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,CALL
; jitlock-lower-thread alone does the same.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-thread<thread=call>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,CALL

declare ptr @jitlock.thread()
declare void @use(ptr)
declare void @jitlock.monitor.enter(ptr)

define void @no_monitors(ptr "jitlock.thread" %t, i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %t1 = call ptr @jitlock.thread()
  call void @use(ptr %t1)
  br label %b
b:
  %t2 = call ptr @jitlock.thread()
  call void @use(ptr %t2)
  ret void
}

define void @with_monitor(ptr "jitlock.thread" %t, ptr %o) {
entry:
  %t1 = call ptr @jitlock.thread()
  call void @use(ptr %t1)
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

; CHECK-LABEL: define void @no_monitors(
; CHECK-NEXT:  entry:
; TLS-NEXT:      %jitlock.tp = call ptr @llvm.thread.pointer()
; TLS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -96
; CALL-NEXT:     %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    br i1 %c, label %a, label %b
; CHECK:       a:
; TLS-NEXT:      call void @use(ptr %jitlock.thread)
; CALL-NEXT:     call void @use(ptr %jitlock.thread)
; ARG-NEXT:      call void @use(ptr %t)
; CHECK:       b:
; TLS-NEXT:      call void @use(ptr %jitlock.thread)
; CALL-NEXT:     call void @use(ptr %jitlock.thread)
; ARG-NEXT:      call void @use(ptr %t)
; CHECK-NEXT:    ret void

; CHECK-LABEL: define void @with_monitor(
; CHECK-NEXT:  entry:
; TLS-NEXT:      %jitlock.tp = call ptr @llvm.thread.pointer()
; TLS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -96
; TLS-NEXT:      call void @use(ptr %jitlock.thread)
; CALL-NEXT:     %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CALL-NEXT:     call void @use(ptr %jitlock.thread)
; ARG-NEXT:      call void @use(ptr %t)
; CHECK-NOT:     @llvm.thread.pointer
; CHECK-NOT:     @jitlock_rt_code_thread
; CHECK:         ret void
; CHECK-NEXT:  }

; CHECK-NOT:   @jitlock.thread(
