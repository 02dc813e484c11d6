; REQUIRES: x86-registered-target
; The x86_64 code of the poll, through llc -O2, in each thread mode: with the
; thread (or, in tls mode, the thread pointer) in a register, the hot path is
; two instructions, `testb $1, off(%reg)` and `jne`, with no call; the call
; to jitlock_rt_safepoint_poll is out of line, after the loop's back branch
; or the function's ret. In tls mode a function that only polls tests the
; byte through %fs directly. docs/fast-paths.md shows and counts this code.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,ARG
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,CALL

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
; TLS-NOT:     callq
; TLS:         testb $1, %fs:{{[0-9]+}}
; ARG-NOT:     {{%fs|callq}}
; ARG:         # %entry
; ARG-NEXT:    testb $1, {{[0-9]+}}(%rdi)
; CALL:        callq jitlock_rt_code_thread@PLT
; CALL-NEXT:   testb $1, {{[0-9]+}}(%rax)
; CHECK-NEXT:  jne [[SLOW:\.LBB[0-9_]+]]
; CHECK-NEXT:  # %jitlock.poll.done
; CHECK-NOT:   callq
; CHECK:       retq
; CHECK-NEXT:  [[SLOW]]: # %jitlock.poll.slow
; CHECK-NOT:   retq
; CHECK:       callq jitlock_rt_safepoint_poll@PLT

; CHECK-LABEL: count:
; TLS:         movq %fs:0, %[[REG:[a-z0-9]+]]
; ARG-NOT:     %fs
; CALL:        movq %rsi, %[[COUNTER:[a-z0-9]+]]
; CALL:        callq jitlock_rt_code_thread@PLT
; CHECK:       # %loop
; CHECK-NEXT:  # =>This Inner Loop Header: Depth=1
; TLS-NEXT:    incq (%rsi)
; TLS-NEXT:    testb $1, {{[0-9]+}}(%[[REG]])
; ARG-NEXT:    incq (%rsi)
; ARG-NEXT:    testb $1, {{[0-9]+}}(%rdi)
; CALL-NEXT:   incq (%[[COUNTER]])
; CALL-NEXT:   testb $1, {{[0-9]+}}(%rax)
; CHECK-NEXT:  jne [[SLOW:\.LBB[0-9_]+]]
; CHECK-NEXT:  [[DONE:\.LBB[0-9_]+]]: # %jitlock.poll.done
; CHECK-NEXT:  # in Loop: Header={{.*}}
; CHECK-NEXT:  incq
; CHECK-NEXT:  cmpq
; CHECK-NEXT:  jb
; CHECK-NEXT:  jmp [[OUT:\.LBB[0-9_]+]]
; CHECK-NEXT:  [[SLOW]]: # %jitlock.poll.slow
; CHECK-NOT:   retq
; CHECK:       callq jitlock_rt_safepoint_poll@PLT
; CHECK-NOT:   retq
; CHECK:       jmp [[DONE]]
; CHECK-NEXT:  [[OUT]]: # %out
