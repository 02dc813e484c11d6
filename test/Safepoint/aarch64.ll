; REQUIRES: aarch64-registered-target
; The AArch64 code of the poll, through llc -O2, in each thread mode: with
; the thread (or, in tls mode, the thread pointer) in a register, the hot
; path is two instructions, `ldrb` of the poll word's low byte and `tbnz` on
; bit 0, with no call; the call to jitlock_rt_safepoint_poll is out of line.
; The poll has no atomic instruction, so LSE (-mattr=+lse) changes nothing.
; docs/fast-paths.md shows and counts this code.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=192>' %s -o %t.tls.bc
; RUN: llc -O2 -mtriple=aarch64-linux-gnu %t.tls.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=CHECK,TLS
; RUN: llc -O2 -mtriple=aarch64-linux-gnu -mattr=+lse %t.tls.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=CHECK,TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' %s \
; RUN:   | llc -O2 -mtriple=aarch64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' %s \
; RUN:   | llc -O2 -mtriple=aarch64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,CALL

declare void @jitlock.safepoint.poll()

define void @poll(ptr "jitlock.thread" %t) {
entry:
  call void @jitlock.safepoint.poll()
  ret void
}

; for (i = 0; i < n; ++i) { ++*counter; poll; }
define void @count(ptr "jitlock.thread" %t, ptr %counter, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load i64, ptr %counter
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %counter
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; CHECK-LABEL: poll:
; TLS:         mrs [[TP:x[0-9]+]], TPIDR_EL0
; TLS-NEXT:    ldrb [[W:w[0-9]+]], {{\[}}[[TP]], #{{[0-9]+}}]
; ARG-NOT:     {{TPIDR_EL0|bl}}
; ARG:         ldrb [[W:w[0-9]+]], [x0, #{{[0-9]+}}]
; CALL:        bl jitlock_rt_code_thread
; CALL-NEXT:   ldrb [[W:w[0-9]+]], [x0, #{{[0-9]+}}]
; CHECK-NEXT:  tbnz [[W]], #0, [[SLOW:\.LBB[0-9_]+]]
; CHECK-NOT:   bl
; CHECK:       ret
; CHECK-NEXT:  [[SLOW]]: // %jitlock.poll.slow
; CHECK-NOT:   ret
; CHECK:       bl jitlock_rt_safepoint_poll

; CHECK-LABEL: count:
; TLS:         mrs [[TP:x[0-9]+]], TPIDR_EL0
; ARG-NOT:     TPIDR_EL0
; CALL:        bl jitlock_rt_code_thread
; CHECK:       // %loop
; CHECK-NEXT:  // =>This Inner Loop Header: Depth=1
; CHECK-NEXT:  ldr [[V:x[0-9]+]], {{\[}}[[COUNTER:x[0-9]+]]]
; CHECK-NEXT:  add [[V]], [[V]], #1
; CHECK-NEXT:  str [[V]], {{\[}}[[COUNTER]]]
; TLS-NEXT:    ldrb [[W:w[0-9]+]], {{\[}}[[TP]], #{{[0-9]+}}]
; ARG-NEXT:    ldrb [[W:w[0-9]+]], [x0, #{{[0-9]+}}]
; CALL-NEXT:   ldrb [[W:w[0-9]+]], [x0, #{{[0-9]+}}]
; CHECK-NEXT:  tbnz [[W]], #0, [[SLOW:\.LBB[0-9_]+]]
; CHECK-NEXT:  [[DONE:\.LBB[0-9_]+]]: // %jitlock.poll.done
; CHECK-NEXT:  // in Loop: Header={{.*}}
; CHECK-NEXT:  add
; CHECK-NEXT:  cmp
; CHECK-NEXT:  b.lo
; CHECK-NEXT:  b [[OUT:\.LBB[0-9_]+]]
; CHECK-NEXT:  [[SLOW]]: // %jitlock.poll.slow
; CHECK-NOT:   ret
; CHECK:       bl jitlock_rt_safepoint_poll
; CHECK-NOT:   ret
; CHECK:       b [[DONE]]
; CHECK-NEXT:  [[OUT]]: // %out
