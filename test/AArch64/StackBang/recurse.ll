; Method-entry stack checks lowered by LLVM, executed on AArch64: this module
; lowered by opt with jitlock-lower<...;bang=watermark|always>, compiled by
; llc, linked with Harness/StackBangHarness.cpp (which counts the slow calls
; through -Wl,--wrap=jitlock_rt_stack_bang) and run under qemu:
;
;   bang=watermark  a fresh thread's first recursion calls the slow path, later
;                   ones of the same depth never do; 100 overflows in a row
;                   inside jitlock_rt_call_guarded, caught by the entry check
;                   and recovered, with the recursion's holds released
;   bang=always     no slow call ever; 10 overflows caught by the runtime's
;                   SIGSEGV backstop
;
; REQUIRES: aarch64-exec
; RUN: rm -rf %t && mkdir %t
;
; Watermark, thread=tls, LSE:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=%a64-tls-offset;bang=watermark>' \
; RUN:   -S %s | %a64-stamp > %t/watermark.tls.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/watermark.tls.ll -o %t/watermark.tls.lse.o
; RUN: %a64-link -o %t/watermark.tls.lse %t/watermark.tls.lse.o %a64-stackbang-harness
; RUN: %qemu-aarch64 %t/watermark.tls.lse --mode watermark --rounds 100 \
; RUN:   | FileCheck %s --check-prefix=WATERMARK -DTHREAD=tls
;
; Watermark, thread=call, LL/SC:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call;bang=watermark>' \
; RUN:   -S %s | %a64-stamp > %t/watermark.call.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -filetype=obj %t/watermark.call.ll -o %t/watermark.call.llsc.o
; RUN: %a64-link -o %t/watermark.call.llsc %t/watermark.call.llsc.o %a64-stackbang-harness
; RUN: %qemu-aarch64 %t/watermark.call.llsc --mode watermark --rounds 100 \
; RUN:   | FileCheck %s --check-prefix=WATERMARK -DTHREAD=call
;
; Always, thread=tls, LSE:
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=%a64-tls-offset;bang=always>' \
; RUN:   -S %s | %a64-stamp > %t/always.tls.ll
; RUN: llc -mtriple=aarch64-linux-gnu -O2 -mattr=+lse -filetype=obj %t/always.tls.ll -o %t/always.tls.lse.o
; RUN: %a64-link -o %t/always.tls.lse %t/always.tls.lse.o %a64-stackbang-harness
; RUN: %qemu-aarch64 %t/always.tls.lse --mode always --rounds 10 \
; RUN:   | FileCheck %s --check-prefix=ALWAYS
;
; WATERMARK:      harness: {{.*}}, thread=[[THREAD]], bang=watermark
; WATERMARK-NEXT: harness: fast path: {{[1-9][0-9]*}} slow call(s) on the first run, none after
; WATERMARK-NEXT: harness: 100 overflow(s) recovered (entry check), {{[0-9]+}} levels deep, {{[0-9]+}} lock holds released each
; WATERMARK-NEXT: harness: PASS
;
; ALWAYS:      harness: {{.*}}, thread=tls, bang=always
; ALWAYS-NEXT: harness: fast path: 0 slow call(s) on the first run, none after
; ALWAYS-NEXT: harness: 10 overflow(s) recovered (SIGSEGV backstop), {{[0-9]+}} levels deep, {{[0-9]+}} lock holds released each
; ALWAYS-NEXT: harness: PASS
;
; @sb_recurse(depth) is a "jitlock-stack-bang" function with a 256-byte
; frame that asks for 512 extra bytes. It records its depth in its frame,
; counts itself, and on every level with depth % 4 == 0 enters one of two
; objects in turn (A B A B: non-adjacent re-entry, so the runtime inflates
; them), recursing while depth > 1 and exiting on the way back, after
; checking that its frame still holds its depth.

%Object = type { i64, i64 }   ; header (1 = unlocked), count

@sb_objects = global [2 x %Object] [%Object { i64 1, i64 0 },
                                    %Object { i64 1, i64 0 }]
@sb_entered = global i64 0   ; levels whose entry check let them in
@sb_holds = global i64 0     ; monitor holds the recursion has, net
@sb_corrupted = global i64 0 ; levels that found their frame changed

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; Writes the first and last word of a 256-byte frame. Not inlined: the
; frame escapes, so all of it stays.
define void @sb_touch(ptr %frame, i64 %v) noinline {
entry:
  store volatile i64 %v, ptr %frame
  %last = getelementptr inbounds i8, ptr %frame, i64 248
  store volatile i64 %v, ptr %last
  ret void
}

define void @sb_verify(ptr %frame, i64 %v) noinline {
entry:
  %first = load volatile i64, ptr %frame
  %last.addr = getelementptr inbounds i8, ptr %frame, i64 248
  %last = load volatile i64, ptr %last.addr
  %bad.first = icmp ne i64 %first, %v
  %bad.last = icmp ne i64 %last, %v
  %bad = or i1 %bad.first, %bad.last
  br i1 %bad, label %corrupt, label %done

corrupt:
  %c = load i64, ptr @sb_corrupted
  %c.next = add i64 %c, 1
  store i64 %c.next, ptr @sb_corrupted
  br label %done

done:
  ret void
}

define void @sb_recurse(i64 %depth) "jitlock-stack-bang"="512" {
entry:
  %frame = alloca [32 x i64], align 16
  call void @sb_touch(ptr %frame, i64 %depth)
  %e = load i64, ptr @sb_entered
  %e.next = add i64 %e, 1
  store i64 %e.next, ptr @sb_entered
  %more = icmp ugt i64 %depth, 1
  %depth.next = sub i64 %depth, 1
  %phase = and i64 %depth, 3
  %lock.level = icmp eq i64 %phase, 0
  br i1 %lock.level, label %locked, label %plain

locked:
  %turn = lshr i64 %depth, 2
  %which = and i64 %turn, 1
  %obj = getelementptr inbounds [2 x %Object], ptr @sb_objects, i64 0, i64 %which
  call void @jitlock.monitor.enter(ptr %obj)
  %h = load i64, ptr @sb_holds
  %h.up = add i64 %h, 1
  store i64 %h.up, ptr @sb_holds
  %count.addr = getelementptr inbounds %Object, ptr %obj, i32 0, i32 1
  %count = load i64, ptr %count.addr
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  br i1 %more, label %locked.call, label %locked.done

locked.call:
  call void @sb_recurse(i64 %depth.next)
  br label %locked.done

locked.done:
  call void @sb_verify(ptr %frame, i64 %depth)
  %h2 = load i64, ptr @sb_holds
  %h.down = sub i64 %h2, 1
  store i64 %h.down, ptr @sb_holds
  call void @jitlock.monitor.exit(ptr %obj)
  ret void

plain:
  br i1 %more, label %plain.call, label %plain.done

plain.call:
  call void @sb_recurse(i64 %depth.next)
  br label %plain.done

plain.done:
  call void @sb_verify(ptr %frame, i64 %depth)
  ret void
}
