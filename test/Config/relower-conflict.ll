; A module already stamped as lowered for one layout, lowered again for
; another (here: another header offset), is a conflicting configuration. So
; is one stamped as lowered with one way of finding the thread, lowered again
; with another (another mode, or another TLS offset).
;
; RUN: split-file %s %t
; The stamped module: lowered with this runtime's layout, then given new code.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/first.ll -o %t/lowered.ll
; RUN: llvm-link -S %t/lowered.ll %t/more.ll -o %t/layout.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=8>' -disable-output %t/layout.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=LAYOUT
; The same layout is fine.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/layout.ll
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/thread.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=THREAD -DNOW=call
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-32>' -disable-output %t/thread.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=THREAD -DNOW='tls;tls-offset=-32'
; The same thread configuration is fine, and the stamp is not repeated.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/thread.ll \
; RUN:   | FileCheck %s --check-prefix=SAME

; LAYOUT: error: jitlock: conflicting configuration: module already lowered for layout '[[ABI:abi=[0-9]+]];header=0;[[REST:[^']*]]', now lowering for '[[ABI]];header=8;[[REST]]'
; THREAD: error: jitlock: conflicting configuration: module already lowered with thread=tls;tls-offset=-320, now with thread=[[NOW]]{{$}}
; SAME:     !"jitlock.lowered-thread", !"tls;tls-offset=-320"}
; SAME-NOT: !"jitlock.lowered-thread"

;--- first.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- more.ll
declare void @jitlock.monitor.enter(ptr)

define void @g(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- thread.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-thread", !"tls;tls-offset=-320"}
