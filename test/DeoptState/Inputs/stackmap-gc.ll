; The collected-heap input of stackmap-x86_64.ll and stackmap-aarch64.ll:
; objects in address space 1 under the statepoint-example strategy, whose
; calls rewrite-statepoints-for-gc turns into statepoints.

declare void @jitlock.monitor.enter(ptr addrspace(1))
declare void @jitlock.monitor.exit(ptr addrspace(1))
declare noalias ptr addrspace(1) @new_object(i64)
declare void @work()

define i64 @collected(ptr addrspace(1) %a, i64 %x) gc "statepoint-example" {
  call void @jitlock.monitor.enter(ptr addrspace(1) %a)
  %t = call ptr addrspace(1) @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr addrspace(1) %t)
  call void @work() "statepoint-id"="103" [ "deopt"(i64 %x) ]
  %payload = getelementptr i8, ptr addrspace(1) %t, i64 8
  %v = load i64, ptr addrspace(1) %payload
  call void @jitlock.monitor.exit(ptr addrspace(1) %t)
  call void @jitlock.monitor.exit(ptr addrspace(1) %a)
  ret i64 %v
}
