; A module already stamped as lowered for one layout, lowered again for
; another (here: another header offset), is a conflicting configuration. So
; is one stamped as lowered with one way of finding the thread, lowered again
; with another (another mode, or another TLS offset).
;
; RUN: split-file %s %t
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

; LAYOUT: error: jitlock: conflicting configuration: module already lowered for layout 'abi=6;header=0;{{.*}}', now lowering for 'abi=6;header=8;{{.*}}'
; THREAD: error: jitlock: conflicting configuration: module already lowered with thread=tls;tls-offset=-320, now with thread=[[NOW]]{{$}}
; SAME:     !"jitlock.lowered-thread", !"tls;tls-offset=-320"}
; SAME-NOT: !"jitlock.lowered-thread"

;--- layout.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-layout", !"abi=6;header=0;mask=3;top=0;base=64;end=128;owner=64;recursions=72;anonymous=2;entries=80;exit=store;watermark=24;page=4096;shadow=20;poll=512;armed=1;monitors=pointer"}

;--- thread.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-thread", !"tls;tls-offset=-320"}
