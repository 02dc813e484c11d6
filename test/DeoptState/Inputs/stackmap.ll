; The input of stackmap-x86_64.ll and stackmap-aarch64.ll: a frame that
; holds %a and an elided temporary at three deopt points.

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare noalias ptr @new_object(i64)
declare void @work()
declare void @llvm.experimental.deoptimize.isVoid(...)

; A call with a deopt bundle and llvm.experimental.deoptimize: code
; generation turns both into stack map records, no GC needed.
define void @plain(ptr %a, i64 %x, i1 %c) {
entry:
  call void @jitlock.monitor.enter(ptr %a)
  %t = call ptr @new_object(i64 16)
  call void @jitlock.monitor.enter(ptr %t)
  call void @work() "statepoint-id"="101" [ "deopt"(i64 %x) ]
  br i1 %c, label %slow, label %done

slow:
  call void (...) @llvm.experimental.deoptimize.isVoid(i64 %x) "statepoint-id"="102" [ "deopt"(i64 %x) ]
  ret void

done:
  call void @jitlock.monitor.exit(ptr %t)
  call void @jitlock.monitor.exit(ptr %a)
  ret void
}
