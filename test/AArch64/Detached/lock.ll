; LLVM-lowered monitor enter and exit executed on AArch64 by a thread that
; never attached (Harness/DetachedHarness.cpp, run under qemu). Such a thread's
; lock stack reads as full, so its inline enter must call the runtime, which
; refuses it, even when the object's monitor is free; an attached thread
; contending through the same code must then get the monitor. The scenario
; every front door passes (expectDetachedEnterRefused in
; unittests/Runtime/RuntimeTestUtil.h), here on machine code from llc, for
; each locking mode, thread mode and atomics, each pair of them covered.
;
; REQUIRES: aarch64-exec
; RUN: rm -rf %t && mkdir %t
;
; The programs: lowered, compiled, linked with the harness.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=%a64-tls-offset;locking=lightweight>' \
; RUN:   -S %s | %a64-stamp > %t/lightweight.tls.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/lightweight.tls.ll -o %t/lightweight.tls.lse.o
; RUN: %a64-link -o %t/lightweight.tls.lse %t/lightweight.tls.lse.o %a64-detached-harness
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call;locking=lightweight>' \
; RUN:   -S %s | %a64-stamp > %t/lightweight.call.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -filetype=obj %t/lightweight.call.ll -o %t/lightweight.call.llsc.o
; RUN: %a64-link -o %t/lightweight.call.llsc %t/lightweight.call.llsc.o %a64-detached-harness
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=%a64-tls-offset;locking=heavy>' \
; RUN:   -S %s | %a64-stamp > %t/heavy.tls.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -filetype=obj %t/heavy.tls.ll -o %t/heavy.tls.llsc.o
; RUN: %a64-link -o %t/heavy.tls.llsc %t/heavy.tls.llsc.o %a64-detached-harness
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call;locking=heavy>' \
; RUN:   -S %s | %a64-stamp > %t/heavy.call.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/heavy.call.ll -o %t/heavy.call.lse.o
; RUN: %a64-link -o %t/heavy.call.lse %t/heavy.call.lse.o %a64-detached-harness
;
; With a misuse handler installed (report and continue), the refused enter
; is reported and the test goes on.
; RUN: %qemu-aarch64 %t/lightweight.tls.lse --locking=lightweight --gtest_brief=1 \
; RUN:   | FileCheck %s -DTHREAD=tls -DLOCKING=lightweight
; RUN: %qemu-aarch64 %t/lightweight.call.llsc --locking=lightweight --gtest_brief=1 \
; RUN:   | FileCheck %s -DTHREAD=call -DLOCKING=lightweight
; RUN: %qemu-aarch64 %t/heavy.tls.llsc --locking=heavy --gtest_brief=1 \
; RUN:   | FileCheck %s -DTHREAD=tls -DLOCKING=heavy
; RUN: %qemu-aarch64 %t/heavy.call.lse --locking=heavy --gtest_brief=1 \
; RUN:   | FileCheck %s -DTHREAD=call -DLOCKING=heavy
;
; Without one, the default for compiled code: the enter after detach aborts
; the process, naming the thread and the object, and never returns.
; RUN: not --crash %qemu-aarch64 %t/lightweight.tls.lse --locking=lightweight --misuse=default 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ABORT
; RUN: not --crash %qemu-aarch64 %t/heavy.call.lse --locking=heavy --misuse=default 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ABORT
;
; ABORT:      detached; entering [[OBJ:0x[0-9a-f]+]]
; ABORT:      misuse from compiled code: monitor enter (JITLOCK_ENOT_ATTACHED) on a thread that is not attached{{.*}}[[OBJ]]
; ABORT-NOT:  the lowered enter returned
;
; CHECK:      harness: {{.*}}, thread=[[THREAD]], locking=[[LOCKING]]
; CHECK:      [  PASSED  ] 1 test.
; CHECK-NOT:  FAILED

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @detached_lock(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @detached_unlock(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
