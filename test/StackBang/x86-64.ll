; REQUIRES: x86-registered-target
; The method-entry check on x86_64 (llc -O2), tls thread mode:
;   watermark: the steady state is one compare of %rsp with the watermark,
;     which folds the load (thread+24, with the thread at %fs:0 - 320: the
;     operand %fs:-296), and one branch, to a slow block laid out after the
;     ret that calls jitlock_rt_stack_bang. With extra frame bytes, the
;     compared value is %rsp - extra.
;   always: one store per shadow page below %rsp (20 of them), no compare, no
;     branch, no call, no thread.
;   none: nothing.
; In every mode a frame larger than a page probes its pages in the prologue
; ("probe-stack"="inline-asm"): one store per page, in a loop. (The
; functions are nounwind, so that no .cfi directives come between the
; instructions.)
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=watermark>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,WATERMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=always>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,ALWAYS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=none>' %s \
; RUN:   | llc -O2 -mtriple=x86_64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,NONE

declare void @work(ptr)

define void @checked(ptr %p) "jitlock-stack-bang" nounwind {
entry:
  call void @work(ptr %p)
  call void @work(ptr %p)
  ret void
}

define void @extra(ptr %p) "jitlock-stack-bang"="4096" nounwind {
entry:
  call void @work(ptr %p)
  ret void
}

define void @bigframe() "jitlock-stack-bang" nounwind {
entry:
  %buf = alloca [65536 x i8]
  call void @work(ptr %buf)
  ret void
}

; CHECK-LABEL:     checked:
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|j[a-z]+|call|mov[a-z]* .*%fs)}}
; WATERMARK:         cmpq %fs:-296, %rsp
; WATERMARK-NEXT:    jbe [[SLOW:\.LBB[0-9_]+]]
; WATERMARK-NEXT:  {{.*}}# %jitlock.bang.done
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|j[a-z]+)[[:space:]]|%fs}}
; WATERMARK:         retq
; WATERMARK-NEXT:  [[SLOW]]: # %jitlock.bang.slow
; WATERMARK-NEXT:    movq %rsp, %rsi
; WATERMARK:         movq %fs:0,
; WATERMARK:         callq jitlock_rt_stack_bang@PLT
; WATERMARK-NEXT:    jmp
; ALWAYS:            movb $0, -4096(%rsp)
; ALWAYS-NEXT:       movb $0, -8192(%rsp)
; ALWAYS-COUNT-17:   movb $0,
; ALWAYS-NEXT:       movb $0, -81920(%rsp)
; ALWAYS-NOT:        movb $0, -{{[0-9]+}}(%rsp)
; ALWAYS-NOT:        {{cmp|%fs|jitlock_rt_stack_bang}}
; NONE-NOT:          {{cmp|%fs|movb|jitlock_rt_stack_bang}}
; CHECK:           .Lfunc_end0:

; CHECK-LABEL:     extra:
; WATERMARK:         movq %rsp, %[[NEED:[a-z0-9]+]]
; WATERMARK-NEXT:    addq $-4096, %[[NEED]]
; WATERMARK-NEXT:    cmpq %fs:-296, %[[NEED]]
; WATERMARK-NEXT:    jbe
; WATERMARK:         callq jitlock_rt_stack_bang@PLT
; ALWAYS-COUNT-20:   movb $0,
; ALWAYS-NEXT:       movb $0, -86016(%rsp)
; ALWAYS-NOT:        movb $0, -{{[0-9]+}}(%rsp)
; NONE-NOT:          {{cmp|%fs|movb|jitlock_rt_stack_bang}}
; CHECK:           .Lfunc_end1:

; The prologue probes each page of the 64 KiB frame before anything else.
; CHECK-LABEL:     bigframe:
; CHECK:             subq $65536, %r11
; CHECK-NEXT:      .LBB2_1:
; CHECK:             subq $4096, %rsp
; CHECK-NEXT:        movq $0, (%rsp)
; CHECK-NEXT:        cmpq %r11, %rsp
; CHECK-NEXT:        jne .LBB2_1
; WATERMARK:         cmpq %fs:-296, %rsp
; WATERMARK-NEXT:    jbe
; CHECK:           .Lfunc_end2:
