; REQUIRES: x86-registered-target
; How each thread mode reaches the fast path on x86_64 (llc -O2):
;   tls   one %fs:0 read, no call (llc may also load the lock-stack top
;         straight from %fs:-320, which is no thread-pointer read);
;   arg   the parameter's register, no %fs and no call;
;   call  one call to jitlock_rt_code_thread before the fast path: the one mode
;         whose fast path is not call-free.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefix=TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefix=ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefix=CALL

declare void @jitlock.monitor.enter(ptr)

define void @enter(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

; TLS-LABEL:  enter:
; TLS:        %fs:0
; TLS-NOT:    {{%fs:0|callq}}
; TLS:        lock cmpxchgq
; TLS-NOT:    {{%fs|callq}}
; TLS:        retq

; The thread is %rdi, the object %rsi.
; ARG-LABEL:  enter:
; ARG-NOT:    {{%fs|callq}}
; ARG:        movl (%rdi), %[[TOP:[a-z0-9]+]]
; ARG-NOT:    {{%fs|callq}}
; ARG:        lock cmpxchgq %{{[a-z0-9]+}}, (%rsi)
; ARG-NOT:    {{%fs|callq}}
; ARG:        retq

; CALL-LABEL: enter:
; CALL-NOT:   %fs
; CALL:       callq jitlock_rt_code_thread@PLT
; CALL-NOT:   {{%fs|callq}}
; CALL:       lock cmpxchgq
; CALL-NOT:   {{%fs|callq}}
; CALL:       retq
