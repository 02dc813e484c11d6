; Lacks @jitlock_example_run: refused before anything runs.
define i64 @jitlock_example_check(i64 %nthreads) {
entry:
  ret i64 0
}
