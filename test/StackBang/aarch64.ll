; REQUIRES: aarch64-registered-target
; The method-entry check on AArch64 (llc -O2), tls thread mode:
;   watermark: sp copied to a register (also the slow call's second
;     argument), one load of the watermark at thread+24 (the thread is
;     TPIDR_EL0 + 192, so [tp, #216]), one compare and one branch, to a slow
;     block laid out after the ret that calls jitlock_rt_stack_bang. With
;     extra frame bytes, the compared value is sp - extra.
;   always: one store per shadow page below sp (20 of them), no compare, no
;     branch, no call, no thread;
;   none: nothing.
; In every mode a frame larger than a page probes its pages in the prologue
; ("probe-stack"="inline-asm"). The functions are nounwind, so that no .cfi
; directives come between the instructions.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=192;bang=watermark>' %s \
; RUN:   | llc -O2 -mtriple=aarch64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,WATERMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=192;bang=always>' %s \
; RUN:   | llc -O2 -mtriple=aarch64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,ALWAYS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=192;bang=none>' %s \
; RUN:   | llc -O2 -mtriple=aarch64-linux-gnu -o - | FileCheck %s --check-prefixes=CHECK,NONE

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
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|b\.|bl)[[:space:]]}}
; WATERMARK:         mrs [[TP:x[0-9]+]], TPIDR_EL0
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|b\.|bl)[[:space:]]}}
; WATERMARK:         mov [[SP:x[0-9]+]], sp
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|b\.|bl)[[:space:]]}}
; WATERMARK:         ldr [[MARK:x[0-9]+]], [[[TP]], #216]
; WATERMARK-NEXT:    cmp [[SP]], [[MARK]]
; WATERMARK-NEXT:    b.ls [[SLOW:\.LBB[0-9_]+]]
; WATERMARK-NEXT:  {{.*}}// %jitlock.bang.done
; WATERMARK-NOT:     {{^[[:space:]]+(cmp|b\.[a-z]+)[[:space:]]|TPIDR_EL0}}
; WATERMARK:         ret
; WATERMARK-NEXT:  [[SLOW]]: // %jitlock.bang.slow
; WATERMARK-NEXT:    add x0, [[TP]], #192
; WATERMARK-NEXT:    bl jitlock_rt_stack_bang
; WATERMARK-NEXT:    b
; ALWAYS:            strb wzr, [sp, x{{[0-9]+}}]
; ALWAYS-COUNT-15:   strb wzr, [sp, x{{[0-9]+}}]
; ALWAYS:            sub [[A:x[0-9]+]], sp, #20, lsl #12
; ALWAYS-NEXT:       strb wzr, [[[A]]]
; ALWAYS-NOT:        strb wzr
; ALWAYS-NOT:        {{cmp|TPIDR_EL0|jitlock_rt_stack_bang}}
; NONE-NOT:          {{cmp|TPIDR_EL0|strb|jitlock_rt_stack_bang}}
; CHECK:           .Lfunc_end0:

; CHECK-LABEL:     extra:
; WATERMARK:         sub [[NEED:x[0-9]+]], sp, #1, lsl #12
; WATERMARK-NEXT:    ldr [[MARK:x[0-9]+]], [x{{[0-9]+}}, #216]
; WATERMARK-NEXT:    cmp [[NEED]], [[MARK]]
; WATERMARK-NEXT:    b.ls
; WATERMARK:         bl jitlock_rt_stack_bang
; ALWAYS:            sub [[A:x[0-9]+]], sp, #21, lsl #12
; ALWAYS-NEXT:       strb wzr, [[[A]]]
; ALWAYS-NOT:        strb wzr
; NONE-NOT:          {{cmp|TPIDR_EL0|strb|jitlock_rt_stack_bang}}
; CHECK:           .Lfunc_end1:

; The prologue probes each page of the 64 KiB frame before anything else.
; CHECK-LABEL:     bigframe:
; CHECK:             sub [[END:x[0-9]+]], sp, #16, lsl #12
; CHECK-NEXT:      .LBB2_1:
; CHECK:             sub sp, sp, #1, lsl #12
; CHECK-NEXT:        cmp sp, [[END]]
; CHECK-NEXT:        str xzr, [sp]
; CHECK-NEXT:        b.ne .LBB2_1
; WATERMARK:         ldr [[MARK:x[0-9]+]], [x{{[0-9]+}}, #216]
; WATERMARK-NEXT:    cmp x{{[0-9]+}}, [[MARK]]
; WATERMARK-NEXT:    b.ls
; CHECK:           .Lfunc_end2:
