; A monitor held across a coroutine suspend point: the coroutine may be
; resumed on another thread, whose lock stack does not hold the object, and
; whose exit then fails (a fast lock is on the creator's lock stack, a
; monitor names the creator as its owner). An error at the suspend point,
; naming the object, when some path reaches it holding the monitor. Locking
; between suspend points is fine. (opt stops at the first error: one case
; per file.)
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t/held.ll 2>&1 | FileCheck %s --check-prefix=HELD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/held.ll 2>&1 | FileCheck %s --check-prefix=HELD
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/some-path.ll 2>&1 | FileCheck %s --check-prefix=SOME
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/loop.ll 2>&1 | FileCheck %s --check-prefix=LOOP
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -disable-output %t/between.ll 2>&1 | FileCheck %s --check-prefix=OK --allow-empty

; HELD: error: jitlock: in function 'held': the monitor of %o may be held across this coroutine suspend point, and the coroutine may resume on a thread that does not hold it: %s = call i8 @llvm.coro.suspend(token none, i1 false)
; SOME: error: jitlock: in function 'some_path': the monitor of %o may be held across this coroutine suspend point, and the coroutine may resume on a thread that does not hold it: %s = call i8 @llvm.coro.suspend(token none, i1 false)
; LOOP: error: jitlock: in function 'loop': the monitor of %b may be held across this coroutine suspend point, and the coroutine may resume on a thread that does not hold it: %s = call i8 @llvm.coro.suspend(token none, i1 false)
; OK-NOT: error

;--- held.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @malloc(i64)
declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare i1 @llvm.coro.end(ptr, i1, token)

; synchronized (o) { co_await ...; }
define ptr @held(ptr %o) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %mem = call ptr @malloc(i64 64)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  call void @jitlock.monitor.enter(ptr %o)
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %end ]
resumed:
  call void @jitlock.monitor.exit(ptr %o)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

;--- some-path.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @malloc(i64)
declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare i1 @llvm.coro.end(ptr, i1, token)

; Held on one path to the suspend point only.
define ptr @some_path(ptr %o, i1 %c) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %mem = call ptr @malloc(i64 64)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br i1 %c, label %locked, label %wait
locked:
  call void @jitlock.monitor.enter(ptr %o)
  br label %wait
wait:
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %end ]
resumed:
  br i1 %c, label %unlock, label %end
unlock:
  call void @jitlock.monitor.exit(ptr %o)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

;--- loop.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @malloc(i64)
declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare i1 @llvm.coro.end(ptr, i1, token)

; A generator that yields inside synchronized (b), in a loop that locks a
; around each step.
define ptr @loop(ptr %a, ptr %b, i64 %n) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %mem = call ptr @malloc(i64 64)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i.next, %resumed ]
  call void @jitlock.monitor.enter(ptr %a)
  call void @jitlock.monitor.exit(ptr %a)
  call void @jitlock.monitor.enter(ptr %b)
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %end ]
resumed:
  call void @jitlock.monitor.exit(ptr %b)
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %head, label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}

;--- between.ll
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare ptr @malloc(i64)
declare void @free(ptr)
declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare ptr @llvm.coro.free(token, ptr)
declare i1 @llvm.coro.end(ptr, i1, token)

; Locking between suspend points, in a loop, recursively: fine.
define ptr @between(ptr %o, i64 %n) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %mem = call ptr @malloc(i64 64)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i.next, %resumed ]
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %end [ i8 0, label %resumed
                             i8 1, label %cleanup ]
resumed:
  %i.next = add i64 %i, 1
  %more = icmp ult i64 %i.next, %n
  br i1 %more, label %head, label %cleanup
cleanup:
  %m = call ptr @llvm.coro.free(token %id, ptr %hdl)
  call void @free(ptr %m)
  br label %end
end:
  call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}
