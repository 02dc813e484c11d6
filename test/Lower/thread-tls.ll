; thread=tls: the current thread is llvm.thread.pointer + tls-offset,
; computed once per function, at the top of the entry block, however many
; monitor operations the function has and wherever they are. Functions
; without monitor operations get nothing.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,NEG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=0x400>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,POS

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

define void @branches(ptr %a, ptr %b, i1 %c) {
entry:
  %slot = alloca i64
  br i1 %c, label %left, label %right
left:
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  br label %join
right:
  call void @jitlock.monitor.enter(ptr %b)
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.exit(ptr %b)
  br label %join
join:
  ret void
}

define void @second(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define void @untouched(ptr %a) {
entry:
  call void @work()
  ret void
}

; CHECK-LABEL: define void @branches(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; NEG-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; POS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 1024
; CHECK-NEXT:    %slot = alloca i64
; CHECK-NEXT:    br i1 %c, label %left, label %right
; CHECK-NOT:     @llvm.thread.pointer
; CHECK-NOT:     @jitlock.thread
; Every slow call, in every block, uses the one value.
; CHECK-COUNT-6: call i32 @jitlock_rt_monitor_{{enter|exit}}_slow(ptr %jitlock.thread, ptr
; CHECK-NOT:     @llvm.thread.pointer
; CHECK:         ret void
; CHECK-NEXT:  }

; CHECK-LABEL: define void @second(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; NEG-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; POS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 1024
; CHECK-NOT:     @llvm.thread.pointer
; CHECK:         ret void
; CHECK-NEXT:  }

; CHECK-LABEL: define void @untouched(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    ret void

; CHECK-NOT:   @jitlock.thread(
; CHECK-NOT:   @jitlock_rt_code_thread
; CHECK:       declare ptr @llvm.thread.pointer()
