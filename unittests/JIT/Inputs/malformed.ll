; Not IR: jitlock-run must say so (exit status 2), not crash.
define i64 @jitlock_example_run(i64 %tid, i64 %nthreads {
entry:
  ret i64 0
