; A bad parameter of a jitlock pass is one error line, "error: jitlock:"
; then the pass, the parameter and what it accepts, and opt exits with 1.
; It is not followed by "unknown pass name": the pipeline parses, and the
; error is reported when the pass would run.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=0>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CAPACITY --implicit-check-not=unknown
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=fiber>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=THREAD --implicit-check-not=unknown
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-safepoints<polls=sometimes>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=POLLS --implicit-check-not=unknown
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='function(instcombine),jitlock-lower<stack=16>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=KEY --implicit-check-not=unknown
; The status is 1, as for every other jitlock error.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=0>' -disable-output %s 2>/dev/null; \
; RUN:   test $? -eq 1

; CAPACITY: {{^}}error: jitlock: jitlock-lower<capacity=0>: capacity=0 is out of range [1, 2147483647]{{$}}
; CAPACITY-NOT: {{.}}
; THREAD: {{^}}error: jitlock: jitlock-lower<thread=fiber>: unknown thread 'fiber'; expected tls|arg|call{{$}}
; THREAD-NOT: {{.}}
; POLLS: {{^}}error: jitlock: jitlock-lower-safepoints<polls=sometimes>: unknown polls 'sometimes'; expected none|explicit|auto{{$}}
; POLLS-NOT: {{.}}
; KEY: {{^}}error: jitlock: jitlock-lower<stack=16>: unknown jitlock-lower parameter 'stack' (expected thread, bang, locking, polls, exit, tls-offset, header-offset, capacity, reserve-shift, reserve-bits, inline, no-inline or monitors){{$}}
; KEY-NOT: {{.}}

declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
