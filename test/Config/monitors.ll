; The monitor storage: pass parameter monitors=pointer|index|table, module
; flag jitlock.monitors (a string), default the runtime layout's
; monitor_storage (pointer unless the runtime is configured otherwise). A
; parameter that disagrees with the flag is a conflicting configuration; a
; bad value is refused when the pipeline is parsed, a bad flag when the
; configuration is resolved. Each storage stamps the layout differently, so
; a module lowered for one cannot be lowered again for another.
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %t/plain.ll | FileCheck %s --check-prefix=POINTER
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=pointer>' -S %t/plain.ll \
; RUN:   | FileCheck %s --check-prefix=POINTER
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=table>' -S %t/table-flag.ll \
; RUN:   | FileCheck %s --check-prefix=TABLE
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=index>' -disable-output %t/table-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=hashed>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=BADPARAM
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/int-flag.ll 2>&1 | FileCheck %s --check-prefix=BADFLAG
; Lowered for pointer (stamped with this runtime's layout), then given new
; code and lowered again for index: the stamps differ in the storage alone.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=pointer>' -S %t/plain.ll -o %t/lowered.ll
; RUN: llvm-link -S %t/lowered.ll %t/more.ll -o %t/stamped.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<monitors=index>' -disable-output %t/stamped.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=RELOWER

; POINTER:  %jitlock.monitor.tagged = inttoptr i64 %jitlock.header to ptr
; POINTER:  !"jitlock.lowered-layout", !"abi={{.*}};monitors=pointer"}
; TABLE:    %jitlock.cache.entry = getelementptr i8, ptr %jitlock.thread
; TABLE:    !"jitlock.lowered-layout", !"abi={{.*}};monitors=table,cache={{[0-9]+}},entries={{[0-9]+}},probes={{[0-9]+}}"}
; CONFLICT: error: jitlock: conflicting configuration: monitors is index in the pass configuration but table in module flag jitlock.monitors
; BADPARAM: unknown monitors 'hashed'; expected pointer|index|table
; BADFLAG:  error: jitlock: module flag jitlock.monitors{{.*}}; expected pointer|index|table
; RELOWER:  error: jitlock: conflicting configuration: module already lowered for layout '[[SAME:abi=[^']*]];monitors=pointer', now lowering for '[[SAME]];monitors=index,shift=

;--- plain.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- table-flag.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.monitors", !"table"}

;--- int-flag.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.monitors", i32 1}

;--- more.ll
declare void @jitlock.monitor.enter(ptr)
define void @g(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
