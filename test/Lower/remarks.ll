; Each monitor operation lowered inline is reported under
; -pass-remarks=jitlock, once per operation, naming the function in the
; message and in the remark record; nothing is reported as missed.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks-missed=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=MISSED --allow-empty
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks-output=%t.yaml -disable-output %s
; RUN: FileCheck %s --check-prefix=YAML < %t.yaml
; RUN: grep -c '^Function: *nested' %t.yaml | FileCheck %s --check-prefix=NESTED
; RUN: grep -c '^Function: *other' %t.yaml | FileCheck %s --check-prefix=OTHER
; The same from the default pipeline.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

define void @nested(ptr %a, ptr %b) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  call void @work()
  call void @jitlock.monitor.exit(ptr %b)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

define void @other(ptr %a) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  call void @work()
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Three enters and three exits, each naming its function.
; CHECK-DAG:     remark: {{.*}}monitor enter in 'nested' lowered to an inline fast path
; CHECK-DAG:     remark: {{.*}}monitor enter in 'nested' lowered to an inline fast path
; CHECK-DAG:     remark: {{.*}}monitor enter in 'other' lowered to an inline fast path
; CHECK-DAG:     remark: {{.*}}monitor exit in 'nested' lowered to an inline fast path
; CHECK-DAG:     remark: {{.*}}monitor exit in 'nested' lowered to an inline fast path
; CHECK-DAG:     remark: {{.*}}monitor exit in 'other' lowered to an inline fast path
; CHECK-NOT:     remark

; MISSED-NOT:    remark

; YAML:          --- !Passed
; YAML-NEXT:     Pass: jitlock
; YAML-NEXT:     Name: Inlined
; YAML-NEXT:     Function: {{nested|other}}
; YAML-NOT:      !Missed
; NESTED:        {{^}}4{{$}}
; OTHER:         {{^}}2{{$}}
