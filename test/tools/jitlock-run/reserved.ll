; --locking=reserved end to end: the runtime configured for lock reservation
; (the field at bit 40, 16 bits, unless --reserve-shift/--reserve-bits say
; otherwise), the lowering reading it from the layout, and a program whose
; objects are marked reservable (header 1 | 0xffff << 40). Each thread locks
; its own object, recursively, around the shared one, which every thread
; contends for. Where the runtime reserves an object for the first thread
; that locks it (R2), its own objects take R1 and R4, with no atomic, and
; the shared one is revoked (R3); the headers the program marks must keep
; every path correct. The invariant: no increment is lost, and every own
; object ends unlocked.
;
; RUN: jitlock-run --locking=reserved --threads 8 --until-contended=40 %s \
; RUN:   | FileCheck %s
; RUN: jitlock-run --locking=reserved --reserve-shift=40 --reserve-bits=16 \
; RUN:   --threads 4 --until-contended=40 %s | FileCheck %s
; RUN: jitlock-run --locking=reserved --layout 2>&1 | FileCheck %s --check-prefix=LAYOUT
; The field must fit: the runtime refuses the configuration.
; RUN: not jitlock-run --locking=reserved --reserve-shift=20 %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=OVERLAP
; RUN: not jitlock-run --reserve-bits=16 %s 2>&1 | FileCheck %s --check-prefix=MODE
;
; CHECK:      reserved.ll: {{[48]}} threads, inline fast paths, stack-bang=watermark, locking=reserved,
; CHECK:      check:   0 (invariant holds)
; CHECK:      contended enters {{[1-9][0-9]*$}}
; LAYOUT:     reservation 16 bits at bit 40
; OVERLAP:    jitlock_rt_configure failed: JITLOCK_EINVAL
; MODE:       error: --reserve-shift and --reserve-bits need --locking=reserved

%Counter = type { i64, i64 }   ; header, value

@own = global [16 x %Counter] [
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 },
  %Counter { i64 72056494526300161, i64 0 }, %Counter { i64 72056494526300161, i64 0 }]
@shared = global %Counter { i64 72056494526300161, i64 0 }

@jitlock_example_iterations = global i64 20000

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %slot = urem i64 %tid, 16
  %mine = getelementptr inbounds [16 x %Counter], ptr @own, i64 0, i64 %slot
  %mine.value = getelementptr inbounds %Counter, ptr %mine, i32 0, i32 1
  %shared.value = getelementptr inbounds %Counter, ptr @shared, i32 0, i32 1
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %next ]
  %more = icmp slt i64 %i, %k
  br i1 %more, label %body, label %done

body:
  call void @jitlock.monitor.enter(ptr %mine)
  call void @jitlock.monitor.enter(ptr %mine)
  %v = load i64, ptr %mine.value
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %mine.value
  call void @jitlock.monitor.exit(ptr %mine)
  ; Every eighth iteration, the shared object inside the own one.
  %low = and i64 %i, 7
  %share = icmp eq i64 %low, 0
  br i1 %share, label %shared.body, label %next

shared.body:
  call void @jitlock.monitor.enter(ptr @shared)
  %s = load i64, ptr %shared.value
  %s.next = add i64 %s, 1
  store i64 %s.next, ptr %shared.value
  call void @jitlock.monitor.exit(ptr @shared)
  br label %next

next:
  call void @jitlock.monitor.exit(ptr %mine)
  %i.next = add i64 %i, 1
  br label %loop

done:
  ret i64 %i
}

define i64 @jitlock_example_result() {
entry:
  call void @jitlock.monitor.enter(ptr @shared)
  %value.addr = getelementptr inbounds %Counter, ptr @shared, i32 0, i32 1
  %value = load i64, ptr %value.addr
  call void @jitlock.monitor.exit(ptr @shared)
  ret i64 %value
}

; 0 iff the shared value is nthreads * ceil(K / 8), each thread's own value
; (threads past 16 share slots) is its threads' K, and every header is
; unlocked (low bits 01) with its embedder-visible bits other than the
; reservation field unchanged.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  %k = load i64, ptr @jitlock_example_iterations
  %k7 = add i64 %k, 7
  %per = udiv i64 %k7, 8
  %expected = mul i64 %nthreads, %per
  %value = call i64 @jitlock_example_result()
  %shared.ok = icmp eq i64 %value, %expected
  br label %scan

scan:
  %j = phi i64 [ 0, %entry ], [ %j.next, %scan.next ]
  %ok = phi i1 [ %shared.ok, %entry ], [ %ok.next, %scan.next ]
  %users.lo = icmp ult i64 %j, %nthreads
  %rest = sub i64 %nthreads, %j
  %users.n = add i64 %rest, 15
  %users = udiv i64 %users.n, 16
  %users.k = mul i64 %users, %k
  %want = select i1 %users.lo, i64 %users.k, i64 0
  %obj = getelementptr inbounds [16 x %Counter], ptr @own, i64 0, i64 %j
  %obj.value = getelementptr inbounds %Counter, ptr %obj, i32 0, i32 1
  %got = load i64, ptr %obj.value
  %value.ok = icmp eq i64 %got, %want
  %h = load atomic i64, ptr %obj monotonic, align 8
  %low = and i64 %h, 3
  %unlocked = icmp eq i64 %low, 1
  %both = and i1 %value.ok, %unlocked
  %ok.next = and i1 %ok, %both
  br label %scan.next

scan.next:
  %j.next = add i64 %j, 1
  %again = icmp ult i64 %j.next, 16
  br i1 %again, label %scan, label %out

out:
  %status = select i1 %ok.next, i64 0, i64 1
  ret i64 %status
}
