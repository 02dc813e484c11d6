; REQUIRES: aarch64-registered-target
; The monitor storage on AArch64 (llc -O2, with and without LSE). Only the
; monitor paths (M1, N2) differ from fast-paths.ll:
;  - index: m = base + (h >> shift) * stride is an `lsr` and a `madd` with
;    the base loaded from the thread; the owner word is then at m + 64;
;  - table: one compare of obj with each probed cache entry's object, loaded
;    from the thread, and the hit's monitor from the word after it; a miss
;    goes to the enter's slow call.
; The acquire CAS on the owner word is one `casa` (LSE) or an
; `ldaxr`/`stxr` loop.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=index>' %s -o %t.index.bc
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;monitors=table>' %s -o %t.table.bc
; RUN: llc -O2 -mtriple=aarch64-linux-gnu %t.index.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=INDEX,INDEX-LLSC
; RUN: llc -O2 -mtriple=aarch64-linux-gnu -mattr=+lse %t.index.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=INDEX,INDEX-LSE
; RUN: llc -O2 -mtriple=aarch64-linux-gnu %t.table.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=TABLE,TABLE-LLSC
; RUN: llc -O2 -mtriple=aarch64-linux-gnu -mattr=+lse %t.table.bc -o - \
; RUN:   | FileCheck %s --check-prefixes=TABLE,TABLE-LSE

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @counter(ptr %o, ptr %c) nounwind {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  %v = load i32, ptr %c
  %v1 = add i32 %v, 1
  store i32 %v1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; INDEX-LABEL: counter:
; INDEX:         mrs x[[TP:[0-9]+]], TPIDR_EL0
; INDEX:         sub x[[THR:[0-9]+]], x[[TP]], #320
; M1: exactly 10, then m = base + (h >> shift) * stride.
; INDEX:       // %jitlock.enter.inflated
; INDEX:         cmp x{{[0-9]+}}, #2
; INDEX-NEXT:    b.ne [[SLOW:\.LBB[0-9_]+]]
; INDEX-NEXT:  // %bb.{{[0-9]+}}: // %jitlock.enter.monitor
; INDEX-DAG:     lsr x[[IDX:[0-9]+]], x{{[0-9]+}}, #[[#SHIFT:]]
; INDEX-DAG:     mov w[[STRIDE:[0-9]+]], #[[#STRIDEVAL:]]
; INDEX-DAG:     ldr x[[BASE:[0-9]+]], [x[[THR]], #[[#BASEOFF:]]]
; INDEX:         madd x[[M:[0-9]+]], x[[IDX]], x[[STRIDE]], x[[BASE]]
; INDEX-NEXT:    ldr x[[OWNER:[0-9]+]], [x[[M]], #64]
; INDEX-NEXT:    cbnz x[[OWNER]],
; INDEX:         add x[[OWNERADDR:[0-9]+]], x[[M]], #64
; INDEX-LLSC:    ldaxr x{{[0-9]+}}, [x[[OWNERADDR]]]
; INDEX-LLSC:    stxr w{{[0-9]+}}, x[[THR]], [x[[OWNERADDR]]]
; INDEX-LSE:     casa x{{[0-9]+}}, x{{[0-9]+}}, [x[[OWNERADDR]]]
; INDEX:         bl jitlock_rt_monitor_enter_slow
; M2: the recursion count at m + 72.
; INDEX:       // %jitlock.enter.monitor.recursive
; INDEX-NEXT:    ldr x[[REC:[0-9]+]], [x[[M]], #72]
; INDEX-NEXT:    add x[[REC]], x[[REC]], #1
; INDEX-NEXT:    str x[[REC]], [x[[M]], #72]

; TABLE-LABEL: counter:
; TABLE:         mrs x[[TP:[0-9]+]], TPIDR_EL0
; TABLE:         sub x[[THR:[0-9]+]], x[[TP]], #320
; M1: exactly 10, then probe 0: the entry's object compared with obj.
; TABLE:       // %jitlock.enter.inflated
; TABLE:         cmp x{{[0-9]+}}, #2
; TABLE-NEXT:    b.ne [[SLOW:\.LBB[0-9_]+]]
; TABLE-NEXT:  // %bb.{{[0-9]+}}: // %jitlock.enter.monitor
; TABLE:         ldr x[[O:[0-9]+]], [x[[THR]], #[[#CACHE:]]]
; TABLE:         cmp x[[O]], x{{[0-9]+}}
; TABLE-NEXT:    b.eq
; The hit: the monitor from the word after the object, then its owner word.
; TABLE:       // %jitlock.enter.monitor.found
; TABLE-NEXT:    ldr x[[M:[0-9]+]], [x{{[0-9]+}}, x{{[0-9]+}}]
; TABLE-NEXT:    ldr x[[OWNER:[0-9]+]], [x[[M]], #64]
; TABLE-NEXT:    cbnz x[[OWNER]],
; TABLE:         add x[[OWNERADDR:[0-9]+]], x[[M]], #64
; TABLE-LLSC:    ldaxr x{{[0-9]+}}, [x[[OWNERADDR]]]
; TABLE-LLSC:    stxr w{{[0-9]+}}, x[[THR]], [x[[OWNERADDR]]]
; TABLE-LSE:     casa x{{[0-9]+}}, x{{[0-9]+}}, [x[[OWNERADDR]]]
; TABLE:         bl jitlock_rt_monitor_enter_slow
