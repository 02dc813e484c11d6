; Memory orderings of the lowered code: three CASes and one store are the
; only ordered accesses. Acquire (on success) for the enter CAS (E5) and the
; owner CAS (M1), release for the exit CAS (X4) and for the store of 0 to
; the owner word (N3), monotonic on failure. Every other access to a header,
; a lock stack or a monitor is a monotonic (relaxed) atomic: other threads
; read them racily. With exit=store nothing is seq_cst or acq_rel but one
; single-thread fence right after N3's store, which emits no instruction and
; only keeps the compiler from moving the entry count's load above the
; store; exit=fence makes that fence a full one.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-64;exit=store>' -S %s \
; RUN:   | FileCheck %s

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @pair(ptr %o, ptr %c) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  store i32 1, ptr %c
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

; CHECK-LABEL: define void @pair(
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; CHECK-NOT:     {{(load|store) (i32|i64|ptr)}}
; CHECK:         %jitlock.cas = cmpxchg ptr %o, {{.*}} acquire monotonic, align 8
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; CHECK-NOT:     {{(load|store) (i32|i64|ptr)}}
; CHECK:         %jitlock.owner.cas = cmpxchg ptr {{.*}} acquire monotonic, align 8
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; The critical section's own store is the only plain access.
; CHECK:         store i32 1, ptr %c, align 4
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; CHECK-NOT:     {{(load|store) (i32|i64|ptr)}}
; CHECK:         %jitlock.cas{{[0-9]+}} = cmpxchg ptr %o, {{.*}} release monotonic, align 8
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; CHECK-NOT:     {{(load|store) (i32|i64|ptr)}}
; CHECK:         store atomic i64 0, ptr {{.*}} release, align 8
; CHECK-NEXT:    fence syncscope("singlethread") seq_cst
; CHECK-NOT:     {{seq_cst|acq_rel|fence|volatile}}
; CHECK-NOT:     {{(load|store) (i32|i64|ptr)}}
; CHECK:         ret void
; CHECK-NEXT:  }

; Count them: 2 acquire CASes, 1 release CAS and 1 release store; the other
; atomic loads and stores are all monotonic.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-64;exit=store>' -S %s \
; RUN:   | FileCheck %s --check-prefix=COUNT
; COUNT-COUNT-2: cmpxchg {{.*}} acquire monotonic
; COUNT:         cmpxchg {{.*}} release monotonic
; COUNT-NOT:     cmpxchg
; COUNT:         store atomic i64 0, ptr {{.*}} release, align 8
; COUNT-NOT:     {{ release|cmpxchg}}

; exit=fence: the same, with a full seq_cst fence right after N3's store
; instead of the single-thread one.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-64;exit=fence>' -S %s \
; RUN:   | FileCheck %s --check-prefix=FENCE
; FENCE-NOT:     fence {{syncscope|seq_cst}}
; FENCE:         store atomic i64 0, ptr {{.*}} release, align 8
; FENCE-NEXT:    fence seq_cst
; FENCE-NOT:     fence {{syncscope|seq_cst}}
