; Objects in a non-default address space, as a frontend with a relocating
; GC declares them (ptr addrspace(1), non-integral here): each lowered
; operation casts the object to the default address space at its start and
; uses the cast only inside itself; the frontend's pointer is what the code
; around it keeps. Both targets compile the result.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s \
; RUN:   | FileCheck %s --check-prefix=RUNTIME
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes='default<O2>' \
; RUN:   -S %s | FileCheck %s --check-prefix=O2
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   %s -o %t.bc
; RUN: %if x86-registered-target %{ llc -mtriple=x86_64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=X86 %}
; RUN: %if aarch64-registered-target %{ llc -mtriple=aarch64-linux-gnu %t.bc -o - \
; RUN:   | FileCheck %s --check-prefix=A64 %}

target datalayout = "ni:1"

declare void @jitlock.monitor.enter(ptr addrspace(1))
declare void @jitlock.monitor.exit(ptr addrspace(1))
declare void @work(ptr addrspace(1))

define void @sync(ptr addrspace(1) %o) {
entry:
  call void @jitlock.monitor.enter(ptr addrspace(1) %o)
  call void @work(ptr addrspace(1) %o)
  call void @jitlock.monitor.exit(ptr addrspace(1) %o)
  ret void
}

; CHECK-LABEL: define void @sync(
; CHECK-NEXT:  entry:
; CHECK-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; CHECK-NEXT:    %jitlock.object = addrspacecast ptr addrspace(1) %o to ptr
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %jitlock.object monotonic
; CHECK:         %jitlock.recursive = icmp eq ptr %jitlock.top.entry, %jitlock.object
; CHECK:         cmpxchg ptr %jitlock.object, {{.*}} acquire monotonic
; CHECK:         store atomic ptr %jitlock.object, ptr %jitlock.slot monotonic
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %jitlock.object)
; CHECK:         call void @work(ptr addrspace(1) %o)
; CHECK-NEXT:    %[[EXIT_OBJ:jitlock.object[0-9]+]] = addrspacecast ptr addrspace(1) %o to ptr
; CHECK:         %jitlock.on.top = icmp eq ptr %jitlock.top.entry{{[0-9]*}}, %[[EXIT_OBJ]]
; CHECK:         cmpxchg ptr %[[EXIT_OBJ]], {{.*}} release monotonic
; CHECK:         call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %[[EXIT_OBJ]])

; RUNTIME-LABEL: define void @sync(
; RUNTIME-NEXT:  entry:
; RUNTIME-NEXT:    %jitlock.thread = call ptr @jitlock_rt_code_thread()
; RUNTIME-NEXT:    %jitlock.object = addrspacecast ptr addrspace(1) %o to ptr
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %jitlock.object)
; RUNTIME-NEXT:    call void @work(ptr addrspace(1) %o)
; RUNTIME-NEXT:    %jitlock.object1 = addrspacecast ptr addrspace(1) %o to ptr
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %jitlock.object1)
; RUNTIME-NEXT:    ret void

; O2-LABEL: define void @sync(
; O2:         cmpxchg ptr {{.*}} acquire monotonic
; O2:         call void @work(ptr addrspace(1) {{.*}}%o)
; O2:         cmpxchg ptr {{.*}} release monotonic
; O2:         ret void

; X86-LABEL: sync:
; X86:         lock cmpxchgq %{{[a-z0-9]+}}, (%[[OBJ:[a-z0-9]+]])
; X86:         callq work@PLT
; X86:         lock cmpxchgq %{{[a-z0-9]+}}, (%[[OBJ]])
; X86:         retq
; X86-DAG:     callq jitlock_rt_monitor_enter_slow@PLT
; X86-DAG:     callq jitlock_rt_monitor_exit_slow@PLT

; A64-LABEL: sync:
; A64:         ldaxr x{{[0-9]+}}, [x[[OBJ:[0-9]+]]]
; A64:         bl work
; A64:         stlxr w{{[0-9]+}}, x{{[0-9]+}}, [x[[OBJ]]]
; A64:         ret
; A64-DAG:     bl jitlock_rt_monitor_enter_slow
; A64-DAG:     bl jitlock_rt_monitor_exit_slow
