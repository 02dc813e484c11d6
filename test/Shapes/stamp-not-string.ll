; A module whose jitlock.lowered-layout or jitlock.lowered-thread flag is not
; a string: the lowering cannot stamp it (a second flag of the same name
; would make the module invalid) and cannot compare it, so it refuses the
; module. Found by the pass fuzzer (fuzz/).
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/layout.ll 2>&1 | FileCheck %s --check-prefix=LAYOUT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/layout.ll 2>&1 | FileCheck %s --check-prefix=LAYOUT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -disable-output %t/thread.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=THREAD

; LAYOUT: error: jitlock: module flag jitlock.lowered-layout must be a string: the stamp of an earlier lowering{{$}}
; THREAD: error: jitlock: module flag jitlock.lowered-thread must be a string: the stamp of an earlier lowering{{$}}

;--- layout.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-layout", i32 1}

;--- thread.ll
declare ptr @jitlock.thread()
declare void @use(ptr)

define void @f() {
  %t = call ptr @jitlock.thread()
  call void @use(ptr %t)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-thread", i64 1048576}
