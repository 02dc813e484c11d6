; The method-entry check of a "jitlock-stack-bang" function, in each bang
; mode (docs/stack-banging.md):
;   watermark (the default): sp = llvm.stacksave; one load of the thread's
;     watermark (thread+24 in the default layout), one unsigned compare, one
;     branch, likely to continue; jitlock_rt_stack_bang(thread, sp) in a cold
;     block otherwise;
;   always: a volatile store to every shadow page below sp (20 pages by
;     default), top down, on every entry; no watermark and no thread;
;   none: no check.
; Every mode adds "probe-stack"="inline-asm" and removes the attribute; a
; function without the attribute is left alone.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,WATERMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=watermark>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,WATERMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=always>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,ALWAYS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;bang=none>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,NONE

declare void @work(ptr)

define void @unchecked() {
entry:
  call void @work(ptr null)
  ret void
}

define void @checked() "jitlock-stack-bang" {
entry:
  call void @work(ptr null)
  ret void
}

; CHECK-LABEL: define void @unchecked() {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    call void @work(ptr null)
; CHECK-NEXT:    ret void

; CHECK-LABEL:      define void @checked()
; CHECK-SAME:       #[[ATTRS:[0-9]+]] {
; CHECK-NEXT:       entry:
; WATERMARK-NEXT:     %jitlock.tp = call ptr @llvm.thread.pointer()
; WATERMARK-NEXT:     %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; WATERMARK-NEXT:     %jitlock.sp.addr = call ptr @llvm.stacksave.p0()
; WATERMARK-NEXT:     %jitlock.sp = ptrtoint ptr %jitlock.sp.addr to i64
; WATERMARK-NEXT:     %jitlock.watermark.addr = getelementptr i8, ptr %jitlock.thread, i64 24
; WATERMARK-NEXT:     %jitlock.watermark = load i64, ptr %jitlock.watermark.addr, align 8
; WATERMARK-NEXT:     %jitlock.above.watermark = icmp ugt i64 %jitlock.sp, %jitlock.watermark
; WATERMARK-NEXT:     br i1 %jitlock.above.watermark, label %jitlock.bang.done, label %jitlock.bang.slow, !prof [[LIKELY:![0-9]+]]
; WATERMARK-EMPTY:
; WATERMARK-NEXT:   jitlock.bang.slow:
; WATERMARK-NEXT:     call void @jitlock_rt_stack_bang(ptr %jitlock.thread, i64 %jitlock.sp) #[[COLD:[0-9]+]]
; WATERMARK-NEXT:     br label %jitlock.bang.done
; WATERMARK-EMPTY:
; WATERMARK-NEXT:   jitlock.bang.done:
; ALWAYS-NEXT:        %jitlock.sp.addr = call ptr @llvm.stacksave.p0()
; ALWAYS-NEXT:        %jitlock.bang.addr = getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#PAGE:]]
; ALWAYS-NEXT:        store volatile i8 0, ptr %jitlock.bang.addr, align 1
; ALWAYS-NEXT:        %jitlock.bang.addr1 = getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#mul(PAGE,2)]]
; ALWAYS-NEXT:        store volatile i8 0, ptr %jitlock.bang.addr1, align 1
; ALWAYS-COUNT-17:    store volatile i8 0
; ALWAYS-NEXT:        %jitlock.bang.addr19 = getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#mul(PAGE,20)]]
; ALWAYS-NEXT:        store volatile i8 0, ptr %jitlock.bang.addr19, align 1
; ALWAYS-NEXT:        br label %jitlock.bang.done
; ALWAYS-EMPTY:
; ALWAYS-NEXT:      jitlock.bang.done:
; CHECK-NEXT:         call void @work(ptr null)
; CHECK-NEXT:         ret void
; CHECK-NEXT:       }

; The slow path does not unwind; its call is cold.
; WATERMARK:        declare void @jitlock_rt_stack_bang(ptr, i64) #[[NOUNWIND:[0-9]+]]
; ALWAYS-NOT:       @jitlock_rt_stack_bang
; ALWAYS-NOT:       @llvm.thread.pointer
; NONE-NOT:         @jitlock_rt_stack_bang
; NONE-NOT:         @llvm.stacksave

; CHECK:            attributes #[[ATTRS]] = { "probe-stack"="inline-asm" }
; WATERMARK:        attributes #[[NOUNWIND]] = { nounwind }
; WATERMARK:        attributes #[[COLD]] = { cold }
; CHECK-NOT:        jitlock-stack-bang

; The watermark offset, page size and shadow pages are in the layout stamp;
; with bang=none nothing of the layout is compiled in, and nothing stamped.
; WATERMARK:        !"jitlock.lowered-layout", !"abi=6;{{.*}};watermark=24;page={{[0-9]+}};shadow=20;poll={{[0-9]+}};armed=1;monitors=pointer"}
; WATERMARK:        [[LIKELY]] = !{!"branch_weights", i32 {{[0-9]+}}, i32 1}
; ALWAYS:           !"jitlock.lowered-layout", !"abi=6;{{.*}};watermark=24;page={{[0-9]+}};shadow=20;poll={{[0-9]+}};armed=1;monitors=pointer"}
; NONE-NOT:         jitlock.lowered-layout
