; header-offset moves the header word relative to the object pointer: every
; header access (E1 load, E5 CAS, X4 load and CAS, N1 load) goes through one
; GEP from the object. Offset 0, the default, needs no GEP. Monitor fields
; are reached from the header's value, so they do not move.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=-8>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,GEP -DOFF=-8
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=16>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,GEP -DOFF=16
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=0>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,ZERO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,ZERO

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @pair(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @pair(ptr %o) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; GEP-NEXT:      %jitlock.header.addr = getelementptr i8, ptr %o, i64 [[OFF]]
; GEP-NEXT:      %jitlock.header = load atomic i64, ptr %jitlock.header.addr monotonic, align 8
; ZERO-NOT:      %jitlock.header.addr
; ZERO-NEXT:     %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK:       jitlock.enter.cas:
; GEP:           cmpxchg ptr %jitlock.header.addr, i64 %jitlock.expected, i64 %jitlock.desired acquire monotonic
; ZERO:          cmpxchg ptr %o, i64 %jitlock.expected, i64 %jitlock.desired acquire monotonic
; CHECK:       jitlock.enter.monitor:
; CHECK:         %jitlock.owner.addr = getelementptr i8, ptr %jitlock.monitor.tagged, i64 62
; The exit computes its own header address.
; CHECK:       jitlock.enter.done:
; GEP-NEXT:      %jitlock.header.addr{{[0-9]+}} = getelementptr i8, ptr %o, i64 [[OFF]]
; ZERO-NOT:      %jitlock.header.addr
; CHECK:       jitlock.exit.unlock:
; GEP-NEXT:      %jitlock.header{{[0-9]+}} = load atomic i64, ptr %jitlock.header.addr{{[0-9]+}} monotonic
; ZERO-NEXT:     %jitlock.header{{[0-9]+}} = load atomic i64, ptr %o monotonic
; CHECK:       jitlock.exit.cas:
; GEP:           cmpxchg ptr %jitlock.header.addr{{[0-9]+}}, i64 %jitlock.header{{[0-9]+}}, i64 {{%[0-9]+}} release monotonic
; ZERO:          cmpxchg ptr %o, i64 %jitlock.header{{[0-9]+}}, i64 {{%[0-9]+}} release monotonic
; CHECK:       jitlock.exit.inflated:
; GEP-NEXT:      %jitlock.header.inflated = load atomic i64, ptr %jitlock.header.addr{{[0-9]+}} monotonic
; ZERO-NEXT:     %jitlock.header.inflated = load atomic i64, ptr %o monotonic
; CHECK:       jitlock.exit.monitor:
; CHECK:         %jitlock.owner.addr{{[0-9]+}} = getelementptr i8, ptr %jitlock.monitor.tagged{{[0-9]+}}, i64 62
; CHECK:       jitlock.exit.release:
; CHECK-NEXT:    store atomic i64 0, ptr %jitlock.owner.addr{{[0-9]+}} release

; The stamp records the offset lowered for.
; GEP:         !"jitlock.lowered-layout", !"abi={{[0-9]+}};header=[[OFF]];
; ZERO:        !"jitlock.lowered-layout", !"abi={{[0-9]+}};header=0;
