; jitlock-run lowers at O2, where jitlock-elide runs first: on 4 threads, an
; example whose temporary box's lock and nested counter lock are elided
; still computes the right sum, and its threads still meet at the counter's
; remaining lock. Lowered for the runtime's calls only (--no-inline), the
; same.
;
; REQUIRES: jitlock-run
; RUN: jitlock-run --threads 4 --until-contended=40 -pass-remarks=jitlock \
; RUN:     %S/Inputs/temporaries.ll 2>&1 \
; RUN:   | FileCheck %s -DPATHS="inline fast paths"
; RUN: jitlock-run --threads 4 --until-contended=40 -pass-remarks=jitlock \
; RUN:     --no-inline %S/Inputs/temporaries.ll 2>&1 \
; RUN:   | FileCheck %s -DPATHS="runtime-only lowering (--no-inline)"

; CHECK-DAG: remark: {{.*}} monitor of %box in 'jitlock_example_run' elided: the object never escapes (allocated by 'new_box')
; CHECK-DAG: remark: {{.*}} nested monitor enter of @counter in 'jitlock_example_run' elided
; CHECK:     temporaries.ll: 4 threads, [[PATHS]],
; CHECK:     check:   0 (invariant holds)
; CHECK:     contended enters {{[1-9][0-9]*$}}
