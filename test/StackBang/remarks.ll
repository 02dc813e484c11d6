; One remark per lowered function under -pass-remarks=jitlock, with the mode
; and the extra frame bytes (as arguments in the YAML record); bang=none is
; reported as missed.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s -DMODE=watermark --implicit-check-not=remark:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=always>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s -DMODE=always --implicit-check-not=remark:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=none>' -pass-remarks-missed=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=NONE --implicit-check-not=remark:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks-output=%t.yaml -disable-output %s
; RUN: FileCheck %s --check-prefix=YAML < %t.yaml
; The same from the default pipeline.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s -DMODE=watermark --implicit-check-not=remark:

define void @plain() "jitlock-stack-bang" {
  ret void
}

define void @framed() "jitlock-stack-bang"="8192" {
  ret void
}

define void @unchecked() {
  ret void
}

; CHECK: remark: <unknown>:0:0: method-entry stack check in 'plain': bang=[[MODE]], 0 extra frame bytes
; CHECK: remark: <unknown>:0:0: method-entry stack check in 'framed': bang=[[MODE]], 8192 extra frame bytes

; NONE: remark: <unknown>:0:0: no method-entry stack check in 'plain': bang=none (0 extra frame bytes)
; NONE: remark: <unknown>:0:0: no method-entry stack check in 'framed': bang=none (8192 extra frame bytes)

; YAML:      --- !Passed
; YAML-NEXT: Pass:            jitlock
; YAML-NEXT: Name:            StackBang
; YAML-NEXT: Function:        plain
; YAML-NEXT: Args:
; YAML-NEXT:   - String:          'method-entry stack check in '''
; YAML-NEXT:   - Function:        plain
; YAML-NEXT:   - String:          ''': bang='
; YAML-NEXT:   - Mode:            watermark
; YAML-NEXT:   - String:          ', '
; YAML-NEXT:   - ExtraBytes:      '0'
; YAML-NEXT:   - String:          ' extra frame bytes'
; YAML:      Function:        framed
; YAML:        - ExtraBytes:      '8192'
; YAML-NOT:  Function:        unchecked
