; no-inline: every monitor operation becomes a call to the runtime's complete
; operation (the reference for differential testing), with no inline code,
; and each one is reported as a missed remark under -pass-remarks-missed.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -pass-remarks-missed=jitlock \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --check-prefix=REMARK
; The passed remark of the inline lowering is not emitted.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -pass-remarks=jitlock \
; RUN:   -disable-output %s 2>&1 | FileCheck %s --check-prefix=PASSED --allow-empty
; The remark records name the function.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -pass-remarks-output=%t.yaml \
; RUN:   -disable-output %s
; RUN: FileCheck %s --check-prefix=YAML < %t.yaml

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @counter(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @counter(ptr %o, ptr %c) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o){{$}}
; CHECK-NEXT:    %v = load i32, ptr %c, align 4
; CHECK-NEXT:    %v1 = add i32 %v, 1
; CHECK-NEXT:    store i32 %v1, ptr %c, align 4
; CHECK-NEXT:    {{%.*}} = call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o){{$}}
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }
; CHECK-NOT:   cmpxchg
; CHECK-NOT:   @jitlock.monitor.
; The layout is stamped all the same.
; CHECK:       !{i32 1, !"jitlock.lowered-layout", !"abi=

; REMARK:      remark: {{.*}}monitor enter in 'counter' sent to the runtime: inline fast paths are disabled (no-inline)
; REMARK-NEXT: remark: {{.*}}monitor exit in 'counter' sent to the runtime: inline fast paths are disabled (no-inline)
; REMARK-NOT:  remark

; PASSED-NOT:  remark

; YAML:        --- !Missed
; YAML-NEXT:   Pass: jitlock
; YAML-NEXT:   Name: RuntimeCall
; YAML-NEXT:   Function: counter
; YAML:        --- !Missed
; YAML-NEXT:   Pass: jitlock
; YAML-NEXT:   Name: RuntimeCall
; YAML-NEXT:   Function: counter
; YAML-NOT:    ---
