; The lowering stamps the module with the layout it compiled in (module flag
; jitlock.lowered-layout) and with how the code finds the current thread
; (module flag jitlock.lowered-thread: "tls;tls-offset=N", "arg" or "call"),
; both with behaviour Error, so that linking modules lowered differently
; fails, and so that a JIT can refuse code lowered for another runtime or, in
; tls mode, for another process's TLS offset. A module with no jitlock
; operations is not stamped. Lowering again with the same configuration is
; fine; with another one it is an error (see ../Config/relower-conflict.ll).
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/main.ll | FileCheck %s -DHEADER=0 -DTHREAD=call
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=-8>' -S %t/main.ll | FileCheck %s -DHEADER=-8 -DTHREAD=call
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %t/main.ll | FileCheck %s -DHEADER=0 -DTHREAD=call
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/main.ll \
; RUN:   | FileCheck %s -DHEADER=0 -DTHREAD='tls;tls-offset=-320'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=0x400>' -S %t/main.ll \
; RUN:   | FileCheck %s -DHEADER=0 -DTHREAD='tls;tls-offset=1024'
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %t/main.ll | FileCheck %s -DHEADER=0 -DTHREAD=arg
; The default pipeline stamps too.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %t/main.ll | FileCheck %s -DHEADER=0 -DTHREAD=call
;
; Lowered twice with one configuration: one stamp of each.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower,jitlock-lower' -S %t/main.ll | FileCheck %s -DHEADER=0 -DTHREAD=call
;
; The layout is stamped by jitlock-lower-monitors, the thread by
; jitlock-lower-thread, which materializes it (with its own configuration).
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors' -S %t/main.ll | FileCheck %s --check-prefix=MONITORS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors,jitlock-lower-thread<thread=tls;tls-offset=8>' -S %t/main.ll \
; RUN:   | FileCheck %s -DHEADER=0 -DTHREAD='tls;tls-offset=8'
;
; No jitlock operations: no stamp.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/none.ll | FileCheck %s --check-prefix=NONE
;
; A frontend's own jitlock.thread() call, with no monitor operation: the
; thread is stamped, the layout (which the code does not use) is not.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/thread-only.ll \
; RUN:   | FileCheck %s --check-prefix=THREADONLY
;
; Lowering the output again changes nothing (a stamped module that still
; holds monitor calls is in ../Config/relower-conflict.ll).
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/main.ll | opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S - | FileCheck %s -DHEADER=0 -DTHREAD=call

; The runtime's default layout: header at [[HEADER]], bits 11/01/00/10, lock
; stack top at thread+0 with slots from +64 to +128, monitor owner at +64 and
; recursions at +72, anonymous owner 2, queued bit 1, the stack-bang
; watermark at thread+24, the host's page size and 20 shadow pages, and the
; safepoint poll word (on a cache line of its own) with armed bit 1.
; CHECK:       !llvm.module.flags = !{[[STAMP:![0-9]+]], [[THREADFLAG:![0-9]+]]}
; CHECK:       [[STAMP]] = !{i32 1, !"jitlock.lowered-layout", !"abi=6;header=[[HEADER]];mask=3;top=0;base=64;end=128;owner=64;recursions=72;anonymous=2;entries=80;exit={{store|fence}};watermark=24;page={{[0-9]+}};shadow=20;poll={{[0-9]+}};armed=1;monitors=pointer"}
; CHECK-NEXT:  [[THREADFLAG]] = !{i32 1, !"jitlock.lowered-thread", !"[[THREAD]]"}
; CHECK-NOT:   jitlock.lowered-

; MONITORS:      !llvm.module.flags = !{[[STAMP:![0-9]+]]}
; MONITORS:      [[STAMP]] = !{i32 1, !"jitlock.lowered-layout", !"abi=6;header=0;
; MONITORS-NOT:  jitlock.lowered-thread

; NONE-NOT:    jitlock.lowered-

; THREADONLY:     !llvm.module.flags = !{[[THREADFLAG:![0-9]+]]}
; THREADONLY:     [[THREADFLAG]] = !{i32 1, !"jitlock.lowered-thread", !"tls;tls-offset=-320"}
; THREADONLY-NOT: jitlock.lowered-layout

;--- main.ll
declare void @jitlock.monitor.enter(ptr)

define void @f(ptr "jitlock.thread" %t, ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- none.ll
declare void @work()
define void @g() {
  call void @work()
  ret void
}

;--- thread-only.ll
declare ptr @jitlock.thread()
declare void @use(ptr)
define void @own() {
  %self = call ptr @jitlock.thread()
  call void @use(ptr %self)
  ret void
}
