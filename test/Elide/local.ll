; jitlock-elide removes every monitor operation on an object that comes from
; a recognized allocation (allockind("alloc"), a noalias return, or a
; configured allocator) and never escapes, as CaptureTracking decides with
; the object's own enters and exits taken as not capturing. Each way of
; escaping keeps the lock, with a missed remark naming it.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-elide<allocators=new_configured;other>' \
; RUN:   -pass-remarks=jitlock -pass-remarks-missed=jitlock -S %s \
; RUN:   -o - 2>%t.remarks | FileCheck %s
; RUN: FileCheck %s --check-prefix=REMARK < %t.remarks
; Without the configuration, the configured allocator is not recognized.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-elide \
; RUN:   -S %s | FileCheck %s --check-prefix=UNCONFIGURED

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare noalias ptr @new_object(i64)
declare ptr @new_kind(i64) allockind("alloc,uninitialized")
declare ptr @new_configured(i64)
declare ptr @not_an_allocator(i64)
declare void @unknown(ptr)
declare void @reads(ptr nocapture readonly)
declare i32 @jitlock_rt_notify(ptr, ptr nocapture)
declare ptr @jitlock.thread()
declare void @work()
declare void @llvm.donothing()
declare ptr @llvm.ptrmask.p0.i64(ptr, i64)

@global = global ptr null

; CHECK-LABEL: define i64 @temporary(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %t)
; CHECK-NEXT:    %payload = getelementptr i8, ptr %t, i64 8
; CHECK-NEXT:    store i64 %x, ptr %payload
; CHECK-NEXT:    call void @reads(ptr %t)
; CHECK-NEXT:    %v = load i64, ptr %payload
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %t)
; CHECK-NEXT:    ret i64 %v
; REMARK: remark: {{.*}} monitor of %t in 'temporary' elided: the object never escapes (allocated by 'new_object')
define i64 @temporary(i64 %x) {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %payload = getelementptr i8, ptr %t, i64 8
  store i64 %x, ptr %payload
  call void @reads(ptr %t)
  %v = load i64, ptr %payload
  call void @jitlock.monitor.exit(ptr %t)
  ret i64 %v
}

; allockind("alloc"), locked twice in a row, and recursively.
; CHECK-LABEL: define void @allockind(
; CHECK-NOT:     call void @jitlock.monitor.{{enter|exit}}
; CHECK:         ret void
; REMARK: remark: {{.*}} monitor of %t in 'allockind' elided: the object never escapes (allocated by 'new_kind')
; UNCONFIGURED-LABEL: define void @allockind(
; UNCONFIGURED:         call void @jitlock.monitor.elided.enter(ptr %t)
define void @allockind() {
  %t = call ptr @new_kind(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.enter(ptr %t)
  call void @work()
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; A configured allocator, inside a lock on an argument, which stays.
; CHECK-LABEL: define void @configured(
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %a)
; CHECK-NEXT:    %t = call ptr @new_configured(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.elided.enter(ptr %t)
; CHECK-NEXT:    call void @jitlock.monitor.elided.exit(ptr %t)
; CHECK-NEXT:    call void @jitlock.monitor.exit(ptr %a)
; REMARK: remark: {{.*}} monitor of %t in 'configured' elided: the object never escapes (allocated by 'new_configured')
; UNCONFIGURED-LABEL: define void @configured(
; UNCONFIGURED-NOT:     elided
; UNCONFIGURED:         ret void
define void @configured(ptr %a) {
  call void @jitlock.monitor.enter(ptr %a)
  %t = call ptr @new_configured(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}

; Not from an allocation: no candidate, no remark.
; CHECK-LABEL: define void @not_allocated(
; CHECK-NEXT:    %t = call ptr @not_an_allocator(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK-NOT: 'not_allocated'
define void @not_allocated() {
  %t = call ptr @not_an_allocator(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; CHECK-LABEL: define void @stored_to_global(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'stored_to_global' kept: the object escapes: it is stored to global @global (store ptr %t, ptr @global, align 8)
define void @stored_to_global() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  store ptr %t, ptr @global
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; CHECK-LABEL: define void @passed_to_unknown(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'passed_to_unknown' kept: the object escapes: it is passed to 'unknown', which may capture it (call void @unknown(ptr %t))
define void @passed_to_unknown() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @unknown(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; CHECK-LABEL: define ptr @returned(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'returned' kept: the object escapes: it is returned (ret ptr %t)
define ptr @returned() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  ret ptr %t
}

; Stored into another object, which itself escapes: the store captures.
; CHECK-LABEL: define void @stored_into_escaping(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'stored_into_escaping' kept: the object escapes: it is stored to memory at %field (store ptr %t, ptr %field, align 8)
define void @stored_into_escaping(ptr %holder) {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %field = getelementptr i8, ptr %holder, i64 8
  store ptr %t, ptr %field
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; CHECK-LABEL: define i64 @ptrtoint(
; CHECK-NEXT:    %t = call ptr @new_object(i64 16)
; CHECK-NEXT:    call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'ptrtoint' kept: the object escapes: its address is taken as an integer (%i = ptrtoint ptr %t to i64)
define i64 @ptrtoint() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %i = ptrtoint ptr %t to i64
  call void @jitlock.monitor.exit(ptr %t)
  ret i64 %i
}

; Used by a call inside a loop.
; CHECK-LABEL: define void @call_in_loop(
; CHECK:         call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'call_in_loop' kept: the object escapes: it is passed to 'unknown', which may capture it (call void @unknown(ptr %t))
define void @call_in_loop(i64 %n) {
entry:
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @unknown(ptr %t)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %done

done:
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; An intrinsic that may capture it.
; CHECK-LABEL: define void @intrinsic(
; CHECK:         call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'intrinsic' kept: the object escapes: it is passed to intrinsic 'llvm.ptrmask.p0.i64' (%masked = call ptr @llvm.ptrmask.p0.i64(ptr %t, i64 -8))
define void @intrinsic() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %masked = call ptr @llvm.ptrmask.p0.i64(ptr %t, i64 -8)
  store ptr %masked, ptr @global
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; A runtime call on the object (notify) needs the lock, even declared
; nocapture.
; CHECK-LABEL: define void @notified(
; CHECK:         call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'notified' kept: the object escapes: it is passed to 'jitlock_rt_notify', which needs the lock
define void @notified() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  %thread = call ptr @jitlock.thread()
  %s = call i32 @jitlock_rt_notify(ptr %thread, ptr %t)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; Locked through an interior pointer: that is another object's lock.
; CHECK-LABEL: define void @interior(
; CHECK:         call void @jitlock.monitor.enter(ptr %inner)
; REMARK: remark: {{.*}} monitor of %t in 'interior' kept: the object escapes: a monitor operation locks a pointer derived from it (call void @jitlock.monitor.{{enter|exit}}(ptr %inner))
define void @interior() {
  %t = call ptr @new_object(i64 32)
  call void @jitlock.monitor.enter(ptr %t)
  %inner = getelementptr i8, ptr %t, i64 16
  call void @jitlock.monitor.enter(ptr %inner)
  call void @jitlock.monitor.exit(ptr %inner)
  call void @jitlock.monitor.exit(ptr %t)
  ret void
}

; Locked but left locked on one path: kept.
; CHECK-LABEL: define void @left_locked(
; CHECK:         call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'left_locked' kept: the function's monitors are not known on every path (at ret void)
define void @left_locked(i1 %c) {
entry:
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  br i1 %c, label %unlock, label %done

unlock:
  call void @jitlock.monitor.exit(ptr %t)
  br label %done

done:
  ret void
}

; Left locked on every path: kept as well.
; CHECK-LABEL: define void @never_unlocked(
; CHECK:         call void @jitlock.monitor.enter(ptr %t)
; REMARK: remark: {{.*}} monitor of %t in 'never_unlocked' kept: the function may leave with it held (at ret void)
define void @never_unlocked() {
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  ret void
}
