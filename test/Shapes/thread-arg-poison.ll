; thread=arg with an optimizer run before the lowering: until the lowering
; uses the parameter marked "jitlock.thread", nothing does, so dead argument
; elimination may pass poison for it at the calls. Lowered code would then
; lock with no thread at all; the lowering refuses each such call instead.
; (The default pipelines lower before they optimize, so they keep it.)
;
; RUN: opt -passes=deadargelim -S %s | FileCheck %s --check-prefix=DAE
; RUN: opt -passes=deadargelim %s | not opt \
; RUN:   -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ERR
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>,deadargelim' -S %s \
; RUN:   | FileCheck %s --check-prefix=LOWERED

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @locked(ptr "jitlock.thread" %t, ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

define void @caller(ptr "jitlock.thread" %t, ptr %o) {
  call void @locked(ptr %t, ptr %o)
  ret void
}

; DAE-LABEL: define void @caller(
; DAE:         call void @locked(ptr poison, ptr %o)

; ERR: error: jitlock: in function 'caller': thread=arg, but this call passes no thread (undef or poison) for the "jitlock.thread" parameter of 'locked', as an optimization before the lowering may leave it; lower before optimizing: {{.*}}call void @locked(ptr poison, ptr %o)

; LOWERED-LABEL: define void @caller(
; LOWERED:         call void @locked(ptr %t, ptr %o)
