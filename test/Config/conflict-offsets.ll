; Conflicting header-offset and tls-offset between pass parameters and
; module flags.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=8>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=HEADER
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-128>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=TLS
; Agreeing values are fine.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-256;header-offset=-8>' \
; RUN:   -disable-output %s

declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0, !1, !2}
!0 = !{i32 1, !"jitlock.thread", !"tls"}
!1 = !{i32 1, !"jitlock.tls-offset", i64 -256}
!2 = !{i32 1, !"jitlock.header-offset", i32 -8}

; HEADER: error: jitlock: conflicting configuration: header-offset is 8 in the pass configuration but -8 in module flag jitlock.header-offset
; TLS: error: jitlock: conflicting configuration: tls-offset is -128 in the pass configuration but -256 in module flag jitlock.tls-offset
