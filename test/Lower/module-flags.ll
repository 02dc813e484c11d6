; Configuration from module flags: a frontend that cannot pass pipeline
; parameters (e.g. one that runs the default O2 pipeline) puts jitlock.*
; flags in the module. A pass parameter that agrees with a flag is fine
; (disagreeing ones are diagnosed: see ../Config/).
;
; RUN: split-file %s %t
;
; jitlock.thread = "arg".
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/arg.ll | FileCheck %s --check-prefix=ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %t/arg.ll | FileCheck %s --check-prefix=ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %t/arg.ll | FileCheck %s --check-prefix=ARG
;
; jitlock.thread = "tls" with jitlock.tls-offset, and header-offset and
; capacity flags.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/tls.ll | FileCheck %s --check-prefix=TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-4096;header-offset=-16;capacity=8>' \
; RUN:   -S %t/tls.ll | FileCheck %s --check-prefix=TLS
;
; jitlock.thread = "call".
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/call.ll | FileCheck %s --check-prefix=CALL

;--- arg.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"arg"}

; ARG-LABEL:   define void @f(ptr {{.*}}"jitlock.thread" %t, ptr %o)
; ARG-NEXT:    entry:
; ARG-NEXT:      %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; ARG:           %jitlock.top = load atomic i32, ptr %t monotonic
; default<O2> lowers first, then optimizes: it may add nonnull to the slow
; call's operands.
; ARG:           call i32 @jitlock_rt_monitor_enter_slow(ptr {{(nonnull )?}}%t, ptr {{(nonnull )?}}%o)
; ARG-NOT:       @jitlock_rt_code_thread
; ARG-NOT:       @llvm.thread.pointer
; ARG:         !"jitlock.lowered-thread", !"arg"}

;--- tls.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0, !1, !2, !3}
!0 = !{i32 1, !"jitlock.thread", !"tls"}
!1 = !{i32 1, !"jitlock.tls-offset", i64 -4096}
!2 = !{i32 1, !"jitlock.header-offset", i32 -16}
!3 = !{i32 1, !"jitlock.capacity", i32 8}

; TLS-LABEL:   define void @f(ptr %o)
; TLS-NEXT:    entry:
; TLS-NEXT:      %jitlock.tp = call ptr @llvm.thread.pointer()
; TLS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -4096
; TLS-NEXT:      %jitlock.header.addr = getelementptr i8, ptr %o, i64 -16
; TLS-NEXT:      %jitlock.header = load atomic i64, ptr %jitlock.header.addr monotonic, align 8
; TLS:           call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)
; TLS:         !"jitlock.lowered-layout", !"abi={{[0-9]+}};header=-16;
; TLS:         !"jitlock.lowered-thread", !"tls;tls-offset=-4096"}

;--- call.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"call"}

; CALL-LABEL:  define void @f(ptr %o)
; CALL-NEXT:   entry:
; CALL-NEXT:     %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CALL:        !"jitlock.lowered-thread", !"call"}
