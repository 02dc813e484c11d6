; thread=arg in a function with no parameter marked "jitlock.thread", or a
; marked parameter that is not a pointer: diagnosed, naming the function.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %t/unmarked.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=UNMARKED
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/flag.ll 2>&1 | FileCheck %s --check-prefix=FLAG
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %t/not-pointer.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=NOTPTR
; A frontend's own jitlock.thread() call is the instruction named.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %t/own-call.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=OWN

; The instruction named is the frontend's own monitor call.
; UNMARKED: error: jitlock: in function 'unmarked': thread=arg, but no parameter of the function is marked "jitlock.thread": call void @jitlock.monitor.enter(ptr %o)
; FLAG: error: jitlock: in function 'by_flag': thread=arg, but no parameter of the function is marked "jitlock.thread": call void @jitlock.monitor.exit(ptr %o)
; A marked parameter that is not a pointer is found when the thread is
; materialized, so the instruction named is the jitlock.thread() request that
; the monitor lowering made on the frontend's behalf.
; NOTPTR: error: jitlock: in function 'int_thread': the parameter marked "jitlock.thread" is not a pointer: call void @jitlock.monitor.enter(ptr %o)
; OWN: error: jitlock: in function 'own': thread=arg, but no parameter of the function is marked "jitlock.thread": %self = call ptr @jitlock.thread()

;--- unmarked.ll
declare void @jitlock.monitor.enter(ptr)
define void @unmarked(ptr %t, ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- flag.ll
declare void @jitlock.monitor.exit(ptr)
define void @by_flag(ptr %o) {
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.thread", !"arg"}

;--- not-pointer.ll
declare void @jitlock.monitor.enter(ptr)
define void @int_thread(i64 "jitlock.thread" %t, ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- own-call.ll
declare ptr @jitlock.thread()
declare void @use(ptr)
define void @own() {
  %self = call ptr @jitlock.thread()
  call void @use(ptr %self)
  ret void
}
