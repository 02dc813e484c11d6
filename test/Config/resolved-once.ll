; The lowering passes of one pipeline resolve the module's configuration once
; (ResolvedConfigAnalysis, which each of them preserves); a pass with other
; parameters asks its own question, and a pass that does not preserve the
; analysis makes the next one resolve again.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -debug-pass-manager -disable-output %s 2>&1 | FileCheck %s --check-prefix=ONCE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors,jitlock-place-polls<polls=auto>,jitlock-lower-safepoints<polls=auto>,jitlock-lower-thread' \
; RUN:   -debug-pass-manager -disable-output %s 2>&1 | FileCheck %s --check-prefix=ONCE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors,function(instcombine),jitlock-lower-thread' \
; RUN:   -debug-pass-manager -disable-output %s 2>&1 | FileCheck %s --check-prefix=TWICE
; A configuration that does not resolve is the same error as before (opt stops
; at the first).
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=4>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ERROR

; ONCE:     Running analysis: {{.*}}ResolvedConfigAnalysis
; ONCE-NOT: Running analysis: {{.*}}ResolvedConfigAnalysis

; TWICE:     Running analysis: {{.*}}ResolvedConfigAnalysis
; TWICE:     Running pass: InstCombinePass
; TWICE:     Running analysis: {{.*}}ResolvedConfigAnalysis
; TWICE-NOT: Running analysis: {{.*}}ResolvedConfigAnalysis

; ERROR: error: jitlock: conflicting configuration: capacity=4, but the runtime's lock stack holds 8 entries

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()

define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.safepoint.poll()
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
