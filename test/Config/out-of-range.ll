; Integer configuration values are range-checked before they are narrowed:
; header-offset and tls-offset must fit in an int32, capacity in
; [1, 2147483647]. (header-offset=4294967296 used to be stored in an int32 as
; 0, and 4294967304 as 8, so that the code silently addressed the wrong
; header word; capacity=-1 was reported as 4294967295.) A bad pass parameter
; is rejected when the pipeline is parsed; a bad module flag when the
; configuration is resolved, naming the flag.
;
; RUN: split-file %s %t
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=4294967296>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=header-offset -DVAL=4294967296 -DLO=-2147483648
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=4294967304>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=header-offset -DVAL=4294967304 -DLO=-2147483648
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=-2147483656>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=header-offset -DVAL=-2147483656 -DLO=-2147483648
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<thread=tls;tls-offset=4294967296>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=tls-offset -DVAL=4294967296 -DLO=-2147483648
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=-1>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=capacity -DVAL=-1 -DLO=1
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=0>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=capacity -DVAL=0 -DLO=1
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=4294967304>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=capacity -DVAL=4294967304 -DLO=1
; The other parametrized names check the same ranges.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower-monitors<header-offset=4294967296>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=PARAM -DNAME=header-offset -DVAL=4294967296 -DLO=-2147483648
; The limits themselves are in range: INT32_MIN is a valid header offset,
; and INT32_MAX a capacity that only the runtime's check rejects.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<header-offset=-2147483648>' -disable-output %t/plain.ll
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<capacity=2147483647>' -disable-output %t/plain.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=LIMIT
;
; Module flags.
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/header-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FLAG -DNAME=header-offset -DVAL=4294967296
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %t/tls-flag.ll 2>&1 \
; RUN:   | FileCheck %s --check-prefix=FLAG -DNAME=tls-offset -DVAL=-2147483649

; PARAM: [[NAME]]=[[VAL]] is out of range [[[LO]], 2147483647]
; PARAM-NOT: error: jitlock:
; LIMIT-NOT: out of range
; LIMIT: error: jitlock: conflicting configuration: capacity=2147483647, but the runtime's lock stack holds 8 entries
; FLAG: error: jitlock: jitlock.[[NAME]]=[[VAL]] is out of range [-2147483648, 2147483647]

;--- plain.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}

;--- header-flag.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"jitlock.header-offset", i64 4294967296}

;--- tls-flag.ll
declare void @jitlock.monitor.enter(ptr)
define void @f(ptr %o) {
  call void @jitlock.monitor.enter(ptr %o)
  ret void
}
!llvm.module.flags = !{!0, !1}
!0 = !{i32 1, !"jitlock.thread", !"tls"}
!1 = !{i32 1, !"jitlock.tls-offset", i64 -2147483649}
