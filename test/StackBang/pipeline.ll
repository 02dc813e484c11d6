; The pipeline names: jitlock-lower runs jitlock-lower-stack-bang after
; jitlock-verify and before jitlock-lower-monitors and jitlock-lower-thread;
; jitlock-lower-stack-bang alone leaves the jitlock.thread() call its check
; requests for jitlock-lower-thread. The plugin adds the lowering to the
; start of the default pipelines, so default<O2> checks the function too,
; once.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-stack-bang' -S %s | FileCheck %s --check-prefix=ALONE
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-stack-bang,jitlock-lower-thread<thread=tls;tls-offset=-320>' \
; RUN:   -S < %s > %t.split.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S < %s > %t.whole.ll
; RUN: diff %t.split.ll %t.whole.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O2
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O0>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O2

declare void @work()

define void @f() "jitlock-stack-bang" {
entry:
  call void @work()
  ret void
}

; ALONE-LABEL: define void @f()
; ALONE-NEXT:  entry:
; ALONE-NEXT:    [[T:%[0-9]+]] = call ptr @jitlock.thread()
; ALONE:         %jitlock.watermark.addr = getelementptr i8, ptr [[T]], i64 24
; ALONE:         call void @jitlock_rt_stack_bang(ptr [[T]], i64 %jitlock.sp)
; ALONE:       declare ptr @jitlock.thread()

; O2-LABEL:    define void @f()
; O2:            call ptr @llvm.stacksave
; O2-NOT:        call ptr @llvm.stacksave
; O2:            call void @jitlock_rt_stack_bang(
; O2-NOT:        call void @jitlock_rt_stack_bang(
; O2:          attributes #{{[0-9]+}} = { "probe-stack"="inline-asm" }
