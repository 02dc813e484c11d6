; Code lowered ahead of time with thread=tls and this runtime's TLS offset,
; then optimized at O3, runs in jitlock-run. InstCombine folds the thread
; computation into the field offsets (the stack-bang check's watermark at
; thread + W becomes thread pointer + one constant), so jitlock-run checks
; the lowering's stamp (jitlock.lowered-thread), not the code. A module
; stamped with another offset is still refused.
;
; The offset is jitlock-run's own (per executable, the same for every run);
; the watermark's place in the thread comes from the same layout.
;
; (Loads the plugin into opt, which a sanitizer build cannot do.)
; REQUIRES: opt-plugin
;
; RUN: OFFSET=$(jitlock-run --layout | sed -n 's/^ *tls: thread = thread pointer //p') && \
; RUN:   WATERMARK=$(jitlock-run --layout | awk '$3 == "StackWatermark" { print $1 }') && \
; RUN:   test -n "$OFFSET" && test -n "$WATERMARK" && \
; RUN:   opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:     -passes="jitlock-lower<thread=tls;tls-offset=$OFFSET>" %s -o %t.lowered.bc && \
; RUN:   opt -O3 %t.lowered.bc -S -o %t.o3.ll
; The optimizer did fold the watermark's address.
; RUN: FileCheck %s --check-prefix=FOLDED -D#%d,OFFSET=$OFFSET \
; RUN:   -D#WATERMARK=$WATERMARK < %t.o3.ll
; RUN: jitlock-run --threads 4 --iterations 2000 %t.o3.ll | FileCheck %s --check-prefix=RAN
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-8>' %s -o %t.foreign.bc
; RUN: opt -O3 %t.foreign.bc -o %t.foreign.o3.bc
; RUN: not jitlock-run --threads 4 %t.foreign.o3.bc 2>&1 | FileCheck %s --check-prefix=FOREIGN

; FOLDED-LABEL: define void @bump(
; FOLDED:         %jitlock.tp = {{(tail )?}}call ptr @llvm.thread.pointer()
; FOLDED:         %jitlock.watermark.addr = getelementptr i8, ptr %jitlock.tp, i64 [[#%d,OFFSET+WATERMARK]]
; FOLDED:         !"jitlock.lowered-thread", !"tls;tls-offset=[[#%d,OFFSET]]"

; RAN:      pre-lowered module
; RAN:      result: 8000
; RAN-NEXT: run:
; RAN-NEXT: check: 0 (invariant holds)

; FOREIGN: was pre-lowered with thread=tls for another process
; FOREIGN-NEXT: module: thread = thread pointer + -8
; FOREIGN-NEXT: runtime: thread = thread pointer + {{-?[0-9]+}}

@counter = global { i64, i64 } { i64 1, i64 0 }
; The increments per thread; jitlock-run --iterations sets it.
@jitlock_example_iterations = global i64 1000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

; A synchronized method with a checked entry.
define void @bump() "jitlock-stack-bang" {
entry:
  call void @jitlock.monitor.enter(ptr @counter)
  %p = getelementptr { i64, i64 }, ptr @counter, i32 0, i32 1
  %v = load i64, ptr %p
  %v1 = add i64 %v, 1
  store i64 %v1, ptr %p
  call void @jitlock.monitor.exit(ptr @counter)
  ret void
}

define i64 @jitlock_example_run(i64 %tid, i64 %threads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @bump()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %k
  br i1 %more, label %loop, label %out
out:
  ret i64 0
}

define i64 @jitlock_example_check(i64 %threads) {
entry:
  %p = getelementptr { i64, i64 }, ptr @counter, i32 0, i32 1
  %v = load i64, ptr %p
  %k = load i64, ptr @jitlock_example_iterations
  %want = mul i64 %k, %threads
  %ok = icmp eq i64 %v, %want
  %status = select i1 %ok, i64 0, i64 1
  ret i64 %status
}

define i64 @jitlock_example_result() {
entry:
  %p = getelementptr { i64, i64 }, ptr @counter, i32 0, i32 1
  %v = load i64, ptr %p
  ret i64 %v
}
