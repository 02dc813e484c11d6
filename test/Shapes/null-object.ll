; A constant null object: the inline path would load the header from
; address 0 and fault, while the runtime reports JITLOCK_ENULL (to the
; misuse handler, then as the call's status). So such an operation is
; lowered to the runtime call alone, with a warning naming the function; opt
; still succeeds. Other operations in the function keep their fast paths. A
; null that is only known at run time is the frontend's to check
; (docs/robustness.md).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s 2>%t.err | FileCheck %s
; RUN: FileCheck %s --check-prefix=WARN --implicit-check-not=warning: < %t.err
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s 2>%t.o2.err | FileCheck %s --check-prefix=O2
; RUN: FileCheck %s --check-prefix=WARN --implicit-check-not=warning: < %t.o2.err

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()

define void @null_object() {
entry:
  call void @jitlock.monitor.enter(ptr null)
  call void @work()
  call void @jitlock.monitor.exit(ptr null)
  ret void
}

; A null in another address space, cast: the same.
define void @cast_null(ptr %o) {
entry:
  call void @jitlock.monitor.enter(ptr addrspacecast (ptr addrspace(1) null to ptr))
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  call void @jitlock.monitor.exit(ptr addrspacecast (ptr addrspace(1) null to ptr))
  ret void
}

; WARN-DAG: warning: jitlock: in function 'null_object': monitor enter of a null object: lowered to the runtime call alone, which reports JITLOCK_ENULL: call void @jitlock.monitor.enter(ptr null)
; WARN-DAG: warning: jitlock: in function 'cast_null': monitor enter of a null object: lowered to the runtime call alone, which reports JITLOCK_ENULL: call void @jitlock.monitor.enter(ptr addrspacecast (ptr addrspace(1) null to ptr))
; WARN-DAG: warning: jitlock: in function 'null_object': monitor exit of a null object: lowered to the runtime call alone, which reports JITLOCK_ENULL: call void @jitlock.monitor.exit(ptr null)
; WARN-DAG: warning: jitlock: in function 'cast_null': monitor exit of a null object: lowered to the runtime call alone, which reports JITLOCK_ENULL: call void @jitlock.monitor.exit(ptr addrspacecast (ptr addrspace(1) null to ptr))

; CHECK-LABEL: define void @null_object(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr null)
; CHECK-NEXT:    call void @work()
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr null)
; CHECK-NEXT:    ret void

; CHECK-LABEL: define void @cast_null(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr addrspacecast (ptr addrspace(1) null to ptr))
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic
; CHECK:         cmpxchg ptr %o, {{.*}} release monotonic
; CHECK:       jitlock.exit.done:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr addrspacecast (ptr addrspace(1) null to ptr))
; CHECK-NEXT:    ret void

; O2-LABEL: define void @null_object(
; O2-NOT:     cmpxchg
; O2:         call i32 @jitlock_rt_monitor_enter_slow(ptr {{.*}}, ptr null)
; O2-NEXT:    tail call void @work()
; O2-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr {{.*}}, ptr null)
