; The monitor group reaches .llvm_stackmaps with the rest of the deopt
; state (docs/deopt.md): in each record, after the three statepoint header
; constants and the frontend's own deopt value (%x), the marker, the count 2,
; then %a (kind 0, held) and the elided temporary (kind 1). Two routes:
; calls with a deopt bundle and llvm.experimental.deoptimize, which code
; generation turns into records by itself; and a "statepoint-example"
; function rewritten by rewrite-statepoints-for-gc, where each object's
; location is also one of the GC pointers the record lists after it.
;
; REQUIRES: aarch64-registered-target
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide,jitlock-lower' %S/Inputs/stackmap.ll \
; RUN:   | llc -mtriple=aarch64-linux-gnu -filetype=obj -o %t.o
; RUN: llvm-readobj --stackmap %t.o | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide,jitlock-lower,rewrite-statepoints-for-gc' \
; RUN:   %S/Inputs/stackmap-gc.ll \
; RUN:   | llc -mtriple=aarch64-linux-gnu -filetype=obj -o %t.gc.o
; RUN: llvm-readobj --stackmap %t.gc.o | FileCheck %s --check-prefix=GC

; CHECK-LABEL: Record ID: 101,
; CHECK-NEXT:    10 locations:
; CHECK-NEXT:      #1: Constant 0, size: 8
; CHECK-NEXT:      #2: Constant 0, size: 8
; CHECK-NEXT:      #3: Constant 7, size: 8
; CHECK-NEXT:      #4: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #5: Constant 1246514481, size: 8
; CHECK-NEXT:      #6: Constant 2, size: 8
; CHECK-NEXT:      #7: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #8: Constant 0, size: 8
; CHECK-NEXT:      #9: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #10: Constant 1, size: 8
; CHECK-LABEL: Record ID: 102,
; CHECK-NEXT:    10 locations:
; CHECK-NEXT:      #1: Constant 0, size: 8
; CHECK-NEXT:      #2: Constant 0, size: 8
; CHECK-NEXT:      #3: Constant 7, size: 8
; CHECK-NEXT:      #4: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #5: Constant 1246514481, size: 8
; CHECK-NEXT:      #6: Constant 2, size: 8
; CHECK-NEXT:      #7: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #8: Constant 0, size: 8
; CHECK-NEXT:      #9: {{Register|Indirect|Direct}} {{.*}}, size: 8
; CHECK-NEXT:      #10: Constant 1, size: 8

; GC-LABEL: Record ID: 103,
; GC-NEXT:    14 locations:
; GC-NEXT:      #1: Constant 0, size: 8
; GC-NEXT:      #2: Constant 0, size: 8
; GC-NEXT:      #3: Constant 7, size: 8
; GC-NEXT:      #4: {{Register|Indirect|Direct}} {{.*}}, size: 8
; GC-NEXT:      #5: Constant 1246514481, size: 8
; GC-NEXT:      #6: Constant 2, size: 8
; GC-NEXT:      #7: [[A:(Register|Indirect|Direct) [^,]*]], size: 8
; GC-NEXT:      #8: Constant 0, size: 8
; GC-NEXT:      #9: [[T:(Register|Indirect|Direct) [^,]*]], size: 8
; GC-NEXT:      #10: Constant 1, size: 8
; GC-DAG:       #{{1[1-4]}}: [[A]], size: 8
; GC-DAG:       #{{1[1-4]}}: [[A]], size: 8
; GC-DAG:       #{{1[1-4]}}: [[T]], size: 8
; GC-DAG:       #{{1[1-4]}}: [[T]], size: 8
