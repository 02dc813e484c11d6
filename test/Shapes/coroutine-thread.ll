; A coroutine may be resumed on another thread after each suspend point. A
; thread computed once in its entry block would be spilled into the
; coroutine frame by CoroSplit and reloaded by the resume function, which
; would then lock with the lock stack of the thread that created the
; coroutine. So nothing derived from the current thread may live across a
; suspend point:
;   * the default pipelines lower the thread requests of an unsplit
;     coroutine at their end, after CoroSplit, once per function it made:
;     the ramp, the resume and the destroy function each compute their own;
;   * pipeline text lowers them at each request, where the request is, so
;     that each operation computes its own thread, before and after CoroSplit
;     alike;
;   * thread=arg cannot follow the coroutine to another thread: an error.
; A coroutine without the presplitcoroutine attribute (CoroEarly adds it
; later) is recognized by its llvm.coro.id.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O2
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-640>' -S %s \
; RUN:   | FileCheck %s --check-prefix=TLS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=-640>,default<O2>' -S %s \
; RUN:   | FileCheck %s --check-prefix=TLS-O2
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s \
; RUN:   | FileCheck %s --check-prefix=CALL
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=arg>' -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ARG

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @jitlock.thread()
declare ptr @malloc(i64)
declare void @free(ptr)

; On each resume: lock %obj, count, record the thread, unlock, suspend.
define ptr @counter(ptr %obj, ptr %count, ptr %threads, i64 %n, ptr "jitlock.thread" %self) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %size = call i64 @llvm.coro.size.i64()
  %mem = call ptr @malloc(i64 %size)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %resumed ]
  call void @jitlock.monitor.enter(ptr %obj)
  %c = load i64, ptr %count
  %c1 = add i64 %c, 1
  store i64 %c1, ptr %count
  %t = call ptr @jitlock.thread()
  %slot = getelementptr ptr, ptr %threads, i64 %i
  store ptr %t, ptr %slot
  call void @jitlock.monitor.exit(ptr %obj)
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %final, label %suspend
suspend:
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %cleanup ]
resumed:
  br label %loop
final:
  %f = call i8 @llvm.coro.suspend(token none, i1 true)
  switch i8 %f, label %end [ i8 0, label %trap
                             i8 1, label %cleanup ]
trap:
  unreachable
cleanup:
  %m = call ptr @llvm.coro.free(token %id, ptr %hdl)
  call void @free(ptr %m)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

; No presplitcoroutine attribute: the llvm.coro.id makes it a coroutine. (It
; is not one CoroSplit splits: LLVM needs the attribute.)
define ptr @unmarked(ptr %obj, ptr "jitlock.thread" %self) {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %size = call i64 @llvm.coro.size.i64()
  %mem = call ptr @malloc(i64 %size)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %cleanup ]
resumed:
  call void @jitlock.monitor.enter(ptr %obj)
  call void @jitlock.monitor.exit(ptr %obj)
  br label %cleanup
cleanup:
  %m = call ptr @llvm.coro.free(token %id, ptr %hdl)
  call void @free(ptr %m)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare i64 @llvm.coro.size.i64()
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare ptr @llvm.coro.free(token, ptr)
declare i1 @llvm.coro.end(ptr, i1, token)

; The default pipeline: every function CoroSplit made computes its thread at
; its entry, and no thread is spilled into the frame or reloaded from it.
; O2-LABEL: define {{.*}}ptr @counter(
; O2-NEXT:  {{[a-z.0-9]+}}:
; O2-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; O2-NOT:     jitlock.thread{{[0-9.]*}}.spill
; O2-LABEL: define internal fastcc void @counter.resume(
; O2-NEXT:  {{[a-z.0-9]+}}:
; O2-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; O2-NOT:     jitlock.thread{{[0-9.]*}}.reload
; O2:         store ptr %jitlock.thread, ptr
; O2-NOT:     jitlock.thread{{[0-9.]*}}.reload
; O2-LABEL: define internal fastcc void @counter.destroy(

; Pipeline text: one thread per request, each next to its use.
; TLS-LABEL: define ptr @counter(
; TLS-NEXT:  entry:
; TLS-NOT:     @llvm.thread.pointer
; TLS:       loop:
; TLS-NEXT:    %i = phi
; TLS-NEXT:    %[[TP1:jitlock.tp[0-9]*]] = call ptr @llvm.thread.pointer()
; TLS-NEXT:    %[[T1:jitlock.thread[0-9]*]] = getelementptr i8, ptr %[[TP1]], i64 -640
; TLS-NEXT:    %jitlock.header = load atomic i64, ptr %obj monotonic
; TLS-NEXT:    %jitlock.top = load atomic i32, ptr %[[T1]] monotonic
; TLS:       jitlock.enter.done:
; TLS:         store i64 %c1, ptr %count
; TLS-NEXT:    %[[TP2:jitlock.tp[0-9]*]] = call ptr @llvm.thread.pointer()
; TLS-NEXT:    %[[T2:jitlock.thread[0-9]*]] = getelementptr i8, ptr %[[TP2]], i64 -640
; TLS-NEXT:    %slot = getelementptr ptr, ptr %threads, i64 %i
; TLS-NEXT:    store ptr %[[T2]], ptr %slot
; TLS-NEXT:    %[[TP3:jitlock.tp[0-9]*]] = call ptr @llvm.thread.pointer()
; TLS-NEXT:    %[[T3:jitlock.thread[0-9]*]] = getelementptr i8, ptr %[[TP3]], i64 -640
; TLS-NEXT:    %jitlock.top{{[0-9]+}} = load atomic i32, ptr %[[T3]] monotonic
; TLS-LABEL: define ptr @unmarked(
; TLS:       resumed:
; TLS-NEXT:    call ptr @llvm.thread.pointer()

; ... which CoroSplit then leaves in place: nothing reloaded.
; TLS-O2-LABEL: define internal fastcc void @counter.resume(
; TLS-O2-NOT:     jitlock.thread{{[0-9.]*}}.reload
; TLS-O2:         call ptr @llvm.thread.pointer()
; TLS-O2-NOT:     jitlock.thread{{[0-9.]*}}.reload
; TLS-O2-LABEL: define internal fastcc void @counter.destroy(

; CALL-LABEL: define ptr @counter(
; CALL:       loop:
; CALL-NEXT:    %i = phi
; CALL-NEXT:    %[[C1:jitlock.thread[0-9]*]] = call ptr @jitlock_rt_code_thread()
; CALL-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %[[C1]], ptr %obj)

; ARG: error: jitlock: in function '{{counter|unmarked}}': thread=arg cannot follow a coroutine to the thread that resumes it (the marked parameter is the thread that created it); lower coroutines with thread=tls or thread=call:
