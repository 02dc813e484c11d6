; thread=arg: the poll uses the parameter marked "jitlock.thread". A
; function with none cannot poll: its explicit polls are errors naming the
; function and the poll, and with polls=auto, where every function polls at
; its returns, the function itself is named.
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg;polls=auto;no-inline>' -S %t/ok.ll | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %t/unmarked.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EXPLICIT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg;polls=auto>' -disable-output %t/unmarked.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=AUTO
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg;polls=auto>' -disable-output %t/not-pointer.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=POINTER

; CHECK-LABEL: define void @f(ptr "jitlock.thread" %self, i64 %n)
; CHECK:         call void @jitlock_rt_safepoint_poll(ptr %self)
; CHECK-NEXT:    br i1 %more, label %loop, label %out
; CHECK:         call void @jitlock_rt_safepoint_poll(ptr %self)
; CHECK-NEXT:    ret void
; EXPLICIT: error: jitlock: in function 'g': thread=arg, but no parameter of the function is marked "jitlock.thread": call void @jitlock.safepoint.poll()
; AUTO: error: jitlock: in function 'g': polls=auto needs the thread: thread=arg, but no parameter of the function is marked "jitlock.thread"
; POINTER: error: jitlock: in function 'h': polls=auto needs the thread: the parameter marked "jitlock.thread" is not a pointer

;--- ok.ll
define void @f(ptr "jitlock.thread" %self, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

;--- unmarked.ll
declare void @jitlock.safepoint.poll()
define void @g() {
  call void @jitlock.safepoint.poll()
  ret void
}

;--- not-pointer.ll
define void @h(i64 "jitlock.thread" %self) {
  ret void
}
