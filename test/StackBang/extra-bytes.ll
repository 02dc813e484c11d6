; "jitlock-stack-bang"="<n>" declares n extra frame bytes: the watermark
; check compares sp - n, and hands sp - n to the slow path; always bangs
; ceil(n / page) more pages below the shadow zone. "0" is the same as no
; value. Past 64 pages, always bangs in a loop instead of unrolling.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %s | FileCheck %s --check-prefix=WATERMARK
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg;bang=always>' -S %s | FileCheck %s --check-prefix=ALWAYS

define void @zero(ptr "jitlock.thread" %t) "jitlock-stack-bang"="0" {
entry:
  ret void
}

define void @page(ptr "jitlock.thread" %t) "jitlock-stack-bang"="4096" {
entry:
  ret void
}

; More than the 20 shadow pages (81920 bytes) of the default layout.
define void @beyond_shadow(ptr "jitlock.thread" %t) "jitlock-stack-bang"="100000" {
entry:
  ret void
}

; 20 + 64 pages: a loop.
define void @huge(ptr "jitlock.thread" %t) "jitlock-stack-bang"="262144" {
entry:
  ret void
}

; WATERMARK-LABEL: define void @zero(
; WATERMARK:         %jitlock.sp = ptrtoint ptr %jitlock.sp.addr to i64
; WATERMARK-NEXT:    %jitlock.watermark.addr = getelementptr i8, ptr %t, i64 24
; WATERMARK-NEXT:    %jitlock.watermark = load i64, ptr %jitlock.watermark.addr, align 8
; WATERMARK-NEXT:    %jitlock.above.watermark = icmp ugt i64 %jitlock.sp, %jitlock.watermark
; WATERMARK:         call void @jitlock_rt_stack_bang(ptr %t, i64 %jitlock.sp)

; WATERMARK-LABEL: define void @page(
; WATERMARK:         %jitlock.sp = ptrtoint ptr %jitlock.sp.addr to i64
; WATERMARK-NEXT:    %jitlock.sp.needed = sub i64 %jitlock.sp, 4096
; WATERMARK-NEXT:    %jitlock.watermark.addr = getelementptr i8, ptr %t, i64 24
; WATERMARK-NEXT:    %jitlock.watermark = load i64, ptr %jitlock.watermark.addr, align 8
; WATERMARK-NEXT:    %jitlock.above.watermark = icmp ugt i64 %jitlock.sp.needed, %jitlock.watermark
; WATERMARK:         call void @jitlock_rt_stack_bang(ptr %t, i64 %jitlock.sp.needed)

; WATERMARK-LABEL: define void @beyond_shadow(
; WATERMARK:         %jitlock.sp.needed = sub i64 %jitlock.sp, 100000
; WATERMARK:         icmp ugt i64 %jitlock.sp.needed, %jitlock.watermark
; WATERMARK:         call void @jitlock_rt_stack_bang(ptr %t, i64 %jitlock.sp.needed)

; WATERMARK-LABEL: define void @huge(
; WATERMARK:         %jitlock.sp.needed = sub i64 %jitlock.sp, 262144
; WATERMARK-NOT:     jitlock.bang.loop

; ALWAYS-LABEL:    define void @zero(
; ALWAYS-COUNT-20:   store volatile i8 0
; ALWAYS-NEXT:       br label %jitlock.bang.done

; One more page: 21 stores, the last at sp - 21 pages.
; ALWAYS-LABEL:    define void @page(
; ALWAYS:            getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#PAGE:]]
; ALWAYS-COUNT-20:   store volatile i8 0
; ALWAYS-NEXT:       getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#mul(PAGE,21)]]
; ALWAYS-NEXT:       store volatile i8 0
; ALWAYS-NEXT:       br label %jitlock.bang.done

; 100000 bytes are 25 pages (rounded up): 45 stores.
; ALWAYS-LABEL:    define void @beyond_shadow(
; ALWAYS-COUNT-44:   store volatile i8 0
; ALWAYS-NEXT:       getelementptr i8, ptr %jitlock.sp.addr, i64 -[[#mul(PAGE,45)]]
; ALWAYS-NEXT:       store volatile i8 0
; ALWAYS-NEXT:       br label %jitlock.bang.done

; ALWAYS-LABEL:    define void @huge(
; ALWAYS-NEXT:     entry:
; ALWAYS-NEXT:       %jitlock.sp.addr = call ptr @llvm.stacksave.p0()
; ALWAYS-NEXT:       br label %jitlock.bang.loop
; ALWAYS-EMPTY:
; ALWAYS-NEXT:     jitlock.bang.loop:
; ALWAYS-NEXT:       %jitlock.bang.down = phi i64 [ -[[#PAGE]], %entry ], [ %jitlock.bang.next, %jitlock.bang.loop ]
; ALWAYS-NEXT:       %jitlock.bang.addr = getelementptr i8, ptr %jitlock.sp.addr, i64 %jitlock.bang.down
; ALWAYS-NEXT:       store volatile i8 0, ptr %jitlock.bang.addr, align 1
; ALWAYS-NEXT:       %jitlock.bang.next = add i64 %jitlock.bang.down, -[[#PAGE]]
; ALWAYS-NEXT:       %jitlock.bang.more = icmp sge i64 %jitlock.bang.next, -[[#mul(PAGE,84)]]
; ALWAYS-NEXT:       br i1 %jitlock.bang.more, label %jitlock.bang.loop, label %jitlock.bang.done
; ALWAYS-EMPTY:
; ALWAYS-NEXT:     jitlock.bang.done:
; ALWAYS-NEXT:       ret void
