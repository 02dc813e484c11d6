; A well-formed example whose invariant fails: exit status 1 (see
; exit-status.test), the failure on stdout and nothing on stderr.
;
; RUN: not jitlock-run %s 2>%t.err | FileCheck %s
; RUN: FileCheck %s --check-prefix=NOERR --allow-empty < %t.err
; CHECK:     check:   1 (INVARIANT FAILED)
; NOERR-NOT: {{.}}
%Object = type { i64, i64 }
@obj = global %Object { i64 1, i64 0 }

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define i64 @jitlock_example_run(i64 %tid, i64 %nthreads) {
entry:
  call void @jitlock.monitor.enter(ptr @obj)
  call void @jitlock.monitor.exit(ptr @obj)
  ret i64 1
}

define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  ret i64 1
}
