; REQUIRES: x86-registered-target
; The fast paths as a JIT compiles them: the default O2 pipeline, which
; lowers at its start (configured by module flags here), then llc -O2. The
; optimizer may reshape the code around them, but the properties of
; fast-paths.ll still hold: up to the ret, one thread-pointer read (%fs:0;
; the enter may load the lock-stack top straight from %fs:-320), one
; `lock cmpxchgq` on the header for the enter and one for the exit, the
; critical section between them, and no call; the runtime calls are after the
; ret (the exit's may become a tail call).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @counter(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

!llvm.module.flags = !{!0, !1}
!0 = !{i32 1, !"jitlock.thread", !"tls"}
!1 = !{i32 1, !"jitlock.tls-offset", i64 -320}

; CHECK-LABEL: counter:
; CHECK-NOT:   {{[[:blank:]](lock|callq|jmp|retq)[[:blank:]]|%fs}}
; CHECK:       {{(add|mov)q}} %fs:0, %[[THR:[a-z0-9]+]]
; CHECK-NOT:   {{[[:blank:]](lock|callq|jmp|retq)[[:blank:]]|%fs:0}}
; CHECK:       lock cmpxchgq %{{[a-z0-9]+}}, (%[[OBJ:[a-z0-9]+]])
; CHECK-NOT:   {{[[:blank:]](lock|callq|jmp|retq)[[:blank:]]|%fs}}
; CHECK:       incl (%{{[a-z0-9]+}})
; CHECK-NOT:   {{[[:blank:]](lock|callq|jmp|retq)[[:blank:]]|%fs}}
; CHECK:       lock cmpxchgq %{{[a-z0-9]+}}, (%[[OBJ]])
; CHECK-NOT:   {{[[:blank:]](lock|callq|jmp|retq)[[:blank:]]|%fs}}
; CHECK:       retq
; Out of line.
; CHECK-NOT:   %fs
; CHECK-DAG:   {{callq|jmp}} jitlock_rt_monitor_enter_slow@PLT
; CHECK-DAG:   {{callq|jmp}} jitlock_rt_monitor_exit_slow@PLT
; CHECK-NOT:   %fs
; CHECK:       .Lfunc_end0:
