; "jitlock-stack-bang" on a naked function: its body is its own assembly,
; prologue included, so an entry check inserted before it would clobber the
; argument registers that assembly reads. An error naming the function, in
; every pipeline that lowers the attribute.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower-stack-bang -disable-output %s 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %s 2>&1 | FileCheck %s
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %s 2>&1 | FileCheck %s

; CHECK: error: jitlock: in function 'naked_entry': "jitlock-stack-bang" is on a naked function, which has no prologue: the check would clobber the argument registers its assembly reads
; CHECK-NOT: error:

define void @naked_entry(ptr %a, i64 %b) naked "jitlock-stack-bang" {
entry:
  call void asm sideeffect "movq %rdi, %rax\0Aretq", "~{rax}"()
  unreachable
}
