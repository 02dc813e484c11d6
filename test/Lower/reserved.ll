; locking=reserved: lock reservation's inline paths (steps R1 and R4 of
; lib/Runtime/Synchronizer.cpp; the layout's reserve_mask and the thread's
; tag at reserve_tag_offset, see jitlock_rt_layout in jitlock_rt.h). The
; enter tests R1 right after E2: a header reserved to this thread, unlocked,
; is pushed with no atomic. Otherwise the lightweight path, whose E5 CASes
; only a header with the reservation field 0; a reservable header is
; reserved to this thread by R2's CAS (as the model's inline enter does),
; one reserved to another thread (R3) goes to the runtime. The exit adds R4
; after the pop and X3: still reserved to this thread, done; revoked (the
; revocation fast-locked it) or never reserved, X4.
;
; The field comes from the runtime's layout (a runtime in
; JITLOCK_LOCKING_RESERVED), or from reserve-shift/reserve-bits (parameters
; or jitlock.* module flags), which stand for such a runtime: the stamp then
; carries ";reserve=shift,bits,tag=offset", and the mode defaults to
; reserved. Header bits 40..55 here, so reserve_mask = 0xffff0000000003.
;
; RUN: split-file %s %t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;locking=reserved;reserve-shift=40;reserve-bits=16>' \
; RUN:   -S %t/ops.ll | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %t/flags.ll | FileCheck %s
;
; The reserving thread's paths have no atomic instruction: the x86_64 and
; AArch64 code from the entry to the first return (the R1 push; after the
; pop, the R4 test), laid out first by the branch weights.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320;reserve-shift=40;reserve-bits=16>' \
; RUN:   %t/ops.ll -o %t.bc
; RUN: %if x86-registered-target %{ llc -O2 -mtriple=x86_64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=X64 %}
; RUN: %if aarch64-registered-target %{ llc -O2 -mtriple=aarch64-linux-gnu -mattr=+lse %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=A64 %}
; RUN: %if aarch64-registered-target %{ llc -O2 -mtriple=aarch64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=A64 %}
;
; Refusals: reserved code needs the field; lightweight code must not run
; against it (its CAS would take a header reserved to another thread); the
; field is checked as the runtime checks it.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=reserved>' -disable-output %t/ops.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=NOFIELD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=lightweight;reserve-shift=40;reserve-bits=16>' \
; RUN:   -disable-output %t/ops.ll 2>&1 | FileCheck %s --check-prefix=LIGHT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<locking=lightweight>' -disable-output %t/flags.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=LIGHT
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<reserve-shift=30;reserve-bits=16>' -disable-output %t/ops.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FIELD -DSHIFT=30 -DBITS=16
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<reserve-shift=40;reserve-bits=1>' -disable-output %t/ops.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FIELD -DSHIFT=40 -DBITS=1
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<reserve-shift=40>' -disable-output %t/ops.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PAIR
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<reserve-shift=41;reserve-bits=16>' -disable-output %t/flags.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=CONFLICT

; CHECK: @jitlock_layout = {{.*}};monitors=pointer;reserve=40,16,tag=[[TAG:[0-9]+]]\00"

; CHECK-LABEL: define void @enter(ptr %o) {
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.tp = call ptr @llvm.thread.pointer()
; CHECK-NEXT:    %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; E1, E2 as in enter.ll.
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK-NEXT:    %jitlock.top = load atomic i32, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    %jitlock.stack.full = icmp uge i32 %jitlock.top, 128
; CHECK-NEXT:    br i1 %jitlock.stack.full, label %jitlock.enter.slow, label %jitlock.enter.header, !prof [[UNLIKELY:![0-9]+]]
; CHECK-EMPTY:
; R1: (header & reserve_mask) == the thread's tag, likely.
; CHECK-NEXT:  jitlock.enter.header:
; CHECK-NEXT:    %jitlock.tag.addr = getelementptr i8, ptr %jitlock.thread, i64 [[TAG]]
; CHECK-NEXT:    %jitlock.tag = load atomic i64, ptr %jitlock.tag.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.reserve = and i64 %jitlock.header, 72056494526300163
; CHECK-NEXT:    %jitlock.reserved.to.self = icmp eq i64 %jitlock.reserve, %jitlock.tag
; CHECK-NEXT:    br i1 %jitlock.reserved.to.self, label %jitlock.enter.reserved, label %jitlock.enter.unreserved, !prof [[LIKELY:![0-9]+]]
; CHECK-EMPTY:
; The push, and nothing else: the header is not written.
; CHECK-NEXT:  jitlock.enter.reserved:
; CHECK-NEXT:    [[T:%.*]] = zext i32 %jitlock.top to i64
; CHECK-NEXT:    %jitlock.slot = getelementptr i8, ptr %jitlock.thread, i64 [[T]]
; CHECK-NEXT:    store atomic ptr %o, ptr %jitlock.slot monotonic, align 8
; CHECK-NEXT:    %jitlock.top.next = add i32 %jitlock.top, 8
; CHECK-NEXT:    store atomic i32 %jitlock.top.next, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    br label %jitlock.enter.done
; CHECK-EMPTY:
; E3 and E4 as in enter.ll.
; CHECK-NEXT:  jitlock.enter.unreserved:
; CHECK:       jitlock.enter.top:
; CHECK:         br i1 %jitlock.recursive, label %jitlock.enter.push, label %jitlock.enter.not.recursive
; CHECK-EMPTY:
; E5 only when the field is 0 (lock bits 01).
; CHECK-NEXT:  jitlock.enter.not.recursive:
; CHECK-NEXT:    %jitlock.reserve2 = and i64 %jitlock.header, 72056494526300163
; CHECK-NEXT:    %jitlock.unreserved = icmp eq i64 %jitlock.reserve2, 1
; CHECK-NEXT:    br i1 %jitlock.unreserved, label %jitlock.enter.cas, label %jitlock.enter.reservable, !prof [[LIKELY]]
; CHECK-EMPTY:
; R2: reservable (the field all ones, 01) and a thread that may reserve (tag
; not ~0): CAS the field to the tag, acquire, then the push. Reserved to
; another thread (R3) or fast-locked: the runtime.
; CHECK-NEXT:  jitlock.enter.reservable:
; CHECK-NEXT:    %jitlock.reservable = icmp eq i64 %jitlock.reserve2, 72056494526300161
; CHECK-NEXT:    %jitlock.may.reserve = icmp ne i64 %jitlock.tag, -1
; CHECK-NEXT:    [[R2:%.*]] = and i1 %jitlock.reservable, %jitlock.may.reserve
; CHECK-NEXT:    br i1 [[R2]], label %jitlock.enter.reserve, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.enter.reserve:
; CHECK-NEXT:    [[KEPT:%.*]] = and i64 %jitlock.header, -72056494526300164
; CHECK-NEXT:    %jitlock.reserved = or i64 [[KEPT]], %jitlock.tag
; CHECK-NEXT:    %jitlock.reserve.cas = cmpxchg ptr %o, i64 %jitlock.header, i64 %jitlock.reserved acquire monotonic, align 8
; CHECK-NEXT:    [[OK:%.*]] = extractvalue { i64, i1 } %jitlock.reserve.cas, 1
; CHECK-NEXT:    br i1 [[OK]], label %jitlock.enter.push, label %jitlock.enter.slow, !prof [[LIKELY]]
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.enter.cas:
; CHECK-NEXT:    %jitlock.expected = or i64 %jitlock.header, 1
; CHECK-NEXT:    %jitlock.desired = and i64 %jitlock.header, -4
; CHECK-NEXT:    %jitlock.cas = cmpxchg ptr %o, i64 %jitlock.expected, i64 %jitlock.desired acquire monotonic, align 8
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o)

; CHECK-LABEL: define void @exit(ptr %o) {
; X1 and X2-X3 as in exit.ll.
; CHECK:         br i1 %jitlock.on.top, label %jitlock.exit.pop, label %jitlock.exit.inflated, !prof [[LIKELY]]
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.exit.pop:
; CHECK-NEXT:    store atomic i32 %jitlock.top.popped, ptr %jitlock.thread monotonic, align 4
; CHECK-NEXT:    %jitlock.below = getelementptr i8, ptr %jitlock.top.slot, i64 -8
; CHECK-NEXT:    %jitlock.below.entry = load atomic ptr, ptr %jitlock.below monotonic, align 8
; CHECK-NEXT:    %jitlock.recursive = icmp eq ptr %jitlock.below.entry, %o
; CHECK-NEXT:    br i1 %jitlock.recursive, label %jitlock.exit.done, label %jitlock.exit.unlock
; CHECK-EMPTY:
; R4: the header after the pop and X3; still reserved to self, done.
; CHECK-NEXT:  jitlock.exit.unlock:
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8
; CHECK-NEXT:    %jitlock.tag.addr = getelementptr i8, ptr %jitlock.thread, i64 [[TAG]]
; CHECK-NEXT:    %jitlock.tag = load atomic i64, ptr %jitlock.tag.addr monotonic, align 8
; CHECK-NEXT:    %jitlock.reserve = and i64 %jitlock.header, 72056494526300163
; CHECK-NEXT:    %jitlock.reserved.to.self = icmp eq i64 %jitlock.reserve, %jitlock.tag
; CHECK-NEXT:    br i1 %jitlock.reserved.to.self, label %jitlock.exit.done, label %jitlock.exit.unreserved, !prof [[LIKELY]]
; CHECK-EMPTY:
; Else X4, as in exit.ll.
; CHECK-NEXT:  jitlock.exit.unreserved:
; CHECK-NEXT:    [[LB:%.*]] = and i64 %jitlock.header, 3
; CHECK-NEXT:    %jitlock.is.fast = icmp eq i64 [[LB]], 0
; CHECK-NEXT:    br i1 %jitlock.is.fast, label %jitlock.exit.cas, label %jitlock.exit.restore
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.exit.cas:
; CHECK-NEXT:    [[UNLOCKED:%.*]] = or i64 %jitlock.header, 1
; CHECK-NEXT:    %jitlock.cas = cmpxchg ptr %o, i64 %jitlock.header, i64 [[UNLOCKED]] release monotonic, align 8

; CHECK: [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 1048575}
; CHECK: [[LIKELY]] = !{!"branch_weights", i32 1048575, i32 1}

; X64-LABEL: enter:
; X64:         # %jitlock.enter.header
; X64-NOT:     {{lock|xchg}}
; X64:         # %jitlock.enter.reserved
; X64-NOT:     {{lock|xchg}}
; X64:         retq
; X64:         # %jitlock.enter.cas
; X64-NEXT:    movq
; X64-NEXT:    orq $1
; X64-NEXT:    andq $-4
; X64-NEXT:    lock cmpxchgq
; X64-LABEL: exit:
; X64:         # %jitlock.exit.pop
; X64-NOT:     {{lock|xchg}}
; X64:         # %jitlock.exit.unlock
; X64-NOT:     {{lock|xchg}}
; X64:         # %jitlock.exit.done
; X64-NOT:     {{lock|xchg}}
; X64:         retq

; A64-LABEL: enter:
; A64:         // %jitlock.enter.header
; A64-NOT:     {{ldaxr|stlxr|ldxr|stxr|cas|ldadd|swp}}
; A64:         // %jitlock.enter.reserved
; A64-NOT:     {{ldaxr|stlxr|ldxr|stxr|cas|ldadd|swp}}
; A64:         ret
; A64-LABEL: exit:
; A64:         // %jitlock.exit.pop
; A64-NOT:     {{ldaxr|stlxr|ldxr|stxr|cas|ldadd|swp}}
; A64:         // %jitlock.exit.unlock
; A64-NOT:     {{ldaxr|stlxr|ldxr|stxr|cas|ldadd|swp}}
; A64:         // %jitlock.exit.done
; A64-NOT:     {{ldaxr|stlxr|ldxr|stxr|cas|ldadd|swp}}
; A64:         ret

; NOFIELD: error: {{.*}}locking=reserved needs the layout's reservation field, which is empty: the runtime is not in JITLOCK_LOCKING_RESERVED (pass reserve-shift=N;reserve-bits=N for one that is)
; LIGHT: error: {{.*}}locking=lightweight against a layout with a reservation field (16 bits at bit 40): its fast lock would take objects reserved to other threads; lower with locking=reserved
; FIELD: error: {{.*}}reserve-shift=[[SHIFT]];reserve-bits=[[BITS]]: the reservation field needs 2 to 32 bits within bits [2,64), clear of the hash field (31 bits at bit 8)
; PAIR: error: {{.*}}reserve-shift and reserve-bits go together: the reservation field needs both
; CONFLICT: error: {{.*}}conflicting configuration: reserve-shift is 41 in the pass configuration but 40 in module flag jitlock.reserve-shift

;--- ops.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

;--- flags.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @enter(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

define void @exit(ptr %o) {
entry:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}

!llvm.module.flags = !{!0, !1}
!0 = !{i32 1, !"jitlock.reserve-shift", i32 40}
!1 = !{i32 1, !"jitlock.reserve-bits", i32 16}
