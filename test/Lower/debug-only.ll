; A plugin built without NDEBUG (the debug preset) prints the LLVM_DEBUG
; output of the DEBUG_TYPEs -jitlock-debug-only names, and only theirs.
;
; REQUIRES: jitlock-asserts
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -jitlock-debug-only=jitlock-lower-monitors -disable-output %s 2>&1 \
; RUN:   | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -jitlock-debug-only=jitlock-elide,jitlock-verify -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=OTHER --allow-empty

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK: jitlock: lowering {{.*}} in f: {{.*}}call void @jitlock.monitor.enter(ptr %o)
; CHECK: jitlock: lowering {{.*}} in f: {{.*}}call void @jitlock.monitor.exit(ptr %o)
; OTHER-NOT: jitlock: lowering
