; jitlock.safepoint.poll() becomes the inline poll (P1 in
; lib/Runtime/Safepoint.cpp): a volatile byte load of the poll word at
; thread + poll_word_offset, a test of the armed bit (bit 0), and a branch
; with unlikely weights to a cold block that calls jitlock_rt_safepoint_poll
; (P2) with the thread and branches back. The thread comes from
; jitlock-lower-thread in each of the three modes, once per function.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-320>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,TLS -DTHREAD=%jitlock.thread
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,ARG -DTHREAD=%%t
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=call>' -S %s \
; RUN:   | FileCheck %s --check-prefixes=CHECK,CALL -DTHREAD=%jitlock.thread
; The pass alone leaves the jitlock.thread() requests to lower-thread.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-safepoints' -S %s \
; RUN:   | FileCheck %s --check-prefix=ALONE

declare void @jitlock.safepoint.poll()
declare void @work()

define void @once(ptr "jitlock.thread" %t) {
entry:
  call void @work()
  call void @jitlock.safepoint.poll()
  call void @work()
  ret void
}

define void @loop(ptr "jitlock.thread" %t, ptr %counter, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %v = load i64, ptr %counter
  %v.next = add i64 %v, 1
  store i64 %v.next, ptr %counter
  call void @jitlock.safepoint.poll()
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %loop, label %out
out:
  ret void
}

; Two polls in one function share one thread value.
define void @twice(ptr "jitlock.thread" %t) {
entry:
  call void @jitlock.safepoint.poll()
  call void @jitlock.safepoint.poll()
  ret void
}

; CHECK-LABEL: define void @once(
; CHECK-NEXT:  entry:
; TLS-NEXT:      %jitlock.tp = call ptr @llvm.thread.pointer()
; TLS-NEXT:      %jitlock.thread = getelementptr i8, ptr %jitlock.tp, i64 -320
; CALL-NEXT:     %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr [[THREAD]], i64 [[OFFSET:[0-9]+]]
; CHECK-NEXT:    %jitlock.poll.word = load volatile i8, ptr %jitlock.poll.addr, align 1
; CHECK-NEXT:    %jitlock.poll.bit = and i8 %jitlock.poll.word, 1
; CHECK-NEXT:    %jitlock.poll.armed = icmp ne i8 %jitlock.poll.bit, 0
; CHECK-NEXT:    br i1 %jitlock.poll.armed, label %jitlock.poll.slow, label %jitlock.poll.done, !prof [[UNLIKELY:![0-9]+]]
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.poll.slow:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr [[THREAD]]) [[COLD:#[0-9]+]]
; CHECK-NEXT:    br label %jitlock.poll.done
; CHECK-EMPTY:
; CHECK-NEXT:  jitlock.poll.done:
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    ret void
; CHECK-NEXT:  }

; The back-edge now leaves from the block after the poll.
; CHECK-LABEL: define void @loop(
; CHECK:       loop:
; CHECK-NEXT:    %i = phi i64 [ 0, %entry ], [ %i.next, %jitlock.poll.done ]
; CHECK:         store i64 %v.next, ptr %counter
; CHECK-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr [[THREAD]], i64 [[OFFSET]]
; CHECK-NEXT:    %jitlock.poll.word = load volatile i8, ptr %jitlock.poll.addr, align 1
; CHECK:         br i1 %jitlock.poll.armed, label %jitlock.poll.slow, label %jitlock.poll.done, !prof [[UNLIKELY]]
; CHECK:       jitlock.poll.slow:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr [[THREAD]]) [[COLD]]
; CHECK-NEXT:    br label %jitlock.poll.done
; CHECK:       jitlock.poll.done:
; CHECK-NEXT:    %i.next = add i64 %i, 1
; CHECK-NEXT:    %more = icmp ult i64 %i.next, %n
; CHECK-NEXT:    br i1 %more, label %loop, label %out

; CHECK-LABEL: define void @twice(
; CHECK-NEXT:  entry:
; TLS-NEXT:      %jitlock.tp = call ptr @llvm.thread.pointer()
; TLS-NEXT:      %jitlock.thread = getelementptr
; CALL-NEXT:     %jitlock.thread = call ptr @jitlock_rt_code_thread()
; TLS-NOT:       @llvm.thread.pointer
; CALL-NOT:      @jitlock_rt_code_thread
; CHECK:         call void @jitlock_rt_safepoint_poll(ptr [[THREAD]])
; TLS-NOT:       @llvm.thread.pointer
; CALL-NOT:      @jitlock_rt_code_thread
; CHECK:         call void @jitlock_rt_safepoint_poll(ptr [[THREAD]])
; CHECK:         ret void

; ARG-NOT:     @llvm.thread.pointer
; ARG-NOT:     @jitlock_rt_code_thread
; CHECK-NOT:   @jitlock.safepoint.poll
; CHECK-NOT:   @jitlock.thread(
; CHECK:       declare void @jitlock_rt_safepoint_poll(ptr) [[NOUNWIND:#[0-9]+]]
; CHECK-DAG:   attributes [[NOUNWIND]] = { nounwind }
; CHECK-DAG:   attributes [[COLD]] = { cold }
; CHECK-DAG:   !"jitlock.lowered-layout", !"{{.*}};poll=[[OFFSET]];armed=1;monitors=pointer"}
; CHECK-DAG:   [[UNLIKELY]] = !{!"branch_weights", i32 1, i32 {{[0-9]+}}}

; ALONE-LABEL: define void @once(
; ALONE-NEXT:  entry:
; ALONE-NEXT:    call void @work()
; ALONE-NEXT:    [[T:%[0-9]+]] = call ptr @jitlock.thread()
; ALONE-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr [[T]], i64
; ALONE:         call void @jitlock_rt_safepoint_poll(ptr [[T]])
; ALONE:       declare ptr @jitlock.thread()
