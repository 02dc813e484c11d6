; A jitlock.* name on something other than a function declaration: a global
; variable, an alias or an ifunc. Nothing lowers a call through it, so the
; program would jump to its address (into data, for a variable). An error for
; every jitlock.* name, at each instruction that uses it, or for the module
; when nothing does. (opt stops at the first error: one case per file.)
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/variable.ll 2>&1 | FileCheck %s --check-prefix=VARIABLE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/variable.ll 2>&1 | FileCheck %s --check-prefix=VARIABLE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/thread.ll 2>&1 | FileCheck %s --check-prefix=THREAD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/poll.ll 2>&1 | FileCheck %s --check-prefix=POLL
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/alias.ll 2>&1 | FileCheck %s --check-prefix=ALIAS
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/ifunc.ll 2>&1 | FileCheck %s --check-prefix=IFUNC
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/unused.ll 2>&1 | FileCheck %s --check-prefix=UNUSED

; VARIABLE: error: jitlock: in function 'calls_data': 'jitlock.monitor.enter' is a global variable, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces: call void @jitlock.monitor.enter(ptr %o)
; THREAD: error: jitlock: in function 'reads_thread': 'jitlock.thread' is a global variable, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces: %t = call ptr @jitlock.thread()
; POLL: error: jitlock: in function 'polls': 'jitlock.safepoint.poll' is a global variable, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces: call void @jitlock.safepoint.poll()
; ALIAS: error: jitlock: in function 'through_alias': 'jitlock.monitor.exit' is an alias, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces: call void @jitlock.monitor.exit(ptr %o)
; IFUNC: error: jitlock: in function 'through_ifunc': 'jitlock.monitor.enter' is an ifunc, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces: call void @jitlock.monitor.enter(ptr %o)
; UNUSED: error: jitlock: 'jitlock.other' is a global variable, not a function declaration; jitlock.* names are reserved for the functions the lowering replaces{{$}}

;--- variable.ll
@jitlock.monitor.enter = global i64 0
define void @calls_data(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- thread.ll
@jitlock.thread = external global i8
define ptr @reads_thread() {
entry:
  %t = call ptr @jitlock.thread()
  ret ptr %t
}

;--- poll.ll
@jitlock.safepoint.poll = constant [4 x i8] c"\C3\C3\C3\C3"
define void @polls() {
entry:
  call void @jitlock.safepoint.poll()
  ret void
}

;--- alias.ll
define void @my_exit(ptr %o) {
entry:
  ret void
}
@jitlock.monitor.exit = alias void (ptr), ptr @my_exit
define void @through_alias(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

;--- ifunc.ll
define ptr @resolve_enter() {
entry:
  ret ptr null
}
@jitlock.monitor.enter = ifunc void (ptr), ptr @resolve_enter
define void @through_ifunc(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- unused.ll
@jitlock.other = global i32 0
