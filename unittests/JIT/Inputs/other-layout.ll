; Stamped as lowered for a runtime whose header sits at offset 8: a JIT on
; this runtime must refuse it.
define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  ret i64 0
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  ret i64 0
}

!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.lowered-layout", !"abi=2;header=8;mask=3;top=0;base=8;end=72;owner=64;recursions=72;anonymous=1;queued=1"}
