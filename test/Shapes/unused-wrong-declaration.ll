; A jitlock function declared with the wrong signature and never called is
; refused too: the lowerings call jitlock.thread() to request the thread
; for the code they insert, and polls=auto calls jitlock.safepoint.poll(),
; through the module's declaration. With a wrong one the requests were left
; unlowered (a call of an undefined jitlock.thread in the output) and the
; polls silently not placed. Found by the pass fuzzer (fuzz/).
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/thread.ll 2>&1 | FileCheck %s --check-prefix=THREAD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -disable-output %t/thread.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=THREAD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/thread.ll 2>&1 | FileCheck %s --check-prefix=THREAD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -disable-output %t/poll.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=POLL
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/enter.ll 2>&1 | FileCheck %s --check-prefix=ENTER

; THREAD: error: jitlock: wrong signature: 'jitlock.thread' is declared as 'i64 ()', expected 'ptr jitlock.thread()'{{$}}
; POLL: error: jitlock: wrong signature: 'jitlock.safepoint.poll' is declared as 'void (i32)', expected 'void jitlock.safepoint.poll()'{{$}}
; ENTER: error: jitlock: wrong signature: 'jitlock.monitor.enter' is declared as 'i32 (ptr)', expected 'void jitlock.monitor.enter(ptr)'{{$}}

;--- thread.ll
declare i64 @jitlock.thread()
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

;--- poll.ll
declare void @jitlock.safepoint.poll(i32)

define void @loop(i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}

;--- enter.ll
declare i32 @jitlock.monitor.enter(ptr)

define void @g() {
  ret void
}
