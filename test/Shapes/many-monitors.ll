; The structured-locking check on one function with 10^4 monitor operations
; on 5000 distinct objects (Inputs/many-monitors.py): it verifies, and one
; exit too many at the end of the loop body is still found. The check costs
; about as much as parsing the function; it used to grow with the cube of
; the number of objects.
;
; RUN: %python %S/Inputs/many-monitors.py 5000 > %t.ll
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t.ll 2>&1 | FileCheck %s --check-prefix=OK --allow-empty
; RUN: %python %S/Inputs/many-monitors.py 5000 --extra-exit > %t.bad.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-verify \
; RUN:   -disable-output %t.bad.ll 2>&1 | FileCheck %s --check-prefix=BAD

; OK-NOT: error
; BAD: error: jitlock: in function 'many': monitor exit without a matching enter on some path: call void @jitlock.monitor.exit(ptr %o0), !extra !0{{$}}
