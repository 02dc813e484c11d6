; Monitor operations inside EH funclets (the MSVC C++ personality): every
; call the lowering creates there (the slow paths; the runtime calls with
; no-inline) carries the funclet's "funclet" bundle, or WinEHPrepare would
; delete it and the slow path would become unreachable. The frontend's own
; bundle is not needed: the lowering finds the funclet itself.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s \
; RUN:   | FileCheck %s --check-prefix=RUNTIME
; The calls survive code generation, WinEHPrepare included.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   %s -o %t.bc
; RUN: llc -mtriple=x86_64-pc-windows-msvc %t.bc -o - | FileCheck %s --check-prefix=ASM
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' %s -o %t.runtime.bc
; RUN: llc -mtriple=x86_64-pc-windows-msvc %t.runtime.bc -o - \
; RUN:   | FileCheck %s --check-prefix=ASM
; REQUIRES: x86-registered-target

target triple = "x86_64-pc-windows-msvc"

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @may_throw()
declare i32 @__CxxFrameHandler3(...)

; A cleanup that locks, with the frontend's bundles.
define void @cleanup(ptr %o) personality ptr @__CxxFrameHandler3 {
entry:
  invoke void @may_throw() to label %done unwind label %pad
pad:
  %cp = cleanuppad within none []
  call void @jitlock.monitor.enter(ptr %o) [ "funclet"(token %cp) ]
  call void @jitlock.monitor.exit(ptr %o) [ "funclet"(token %cp) ]
  cleanupret from %cp unwind to caller
done:
  ret void
}

; The same in a catch handler, written without bundles.
define void @catch(ptr %o) personality ptr @__CxxFrameHandler3 {
entry:
  invoke void @may_throw() to label %done unwind label %dispatch
dispatch:
  %cs = catchswitch within none [label %handler] unwind to caller
handler:
  %cp = catchpad within %cs [ptr null, i32 64, ptr null]
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  catchret from %cp to label %done
done:
  ret void
}

; CHECK-LABEL: define void @cleanup(
; CHECK:       pad:
; CHECK-NEXT:    %cp = cleanuppad within none []
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}} [ "funclet"(token %cp) ]
; CHECK:       jitlock.exit.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}} [ "funclet"(token %cp) ]
; CHECK:         cleanupret from %cp unwind to caller

; CHECK-LABEL: define void @catch(
; CHECK:       handler:
; CHECK-NEXT:    %cp = catchpad within %cs
; CHECK:       jitlock.enter.slow{{[0-9]*}}:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}} [ "funclet"(token %cp) ]
; CHECK:       jitlock.exit.slow{{[0-9]*}}:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}} [ "funclet"(token %cp) ]
; CHECK:         catchret from %cp to label %done

; RUNTIME-LABEL: define void @cleanup(
; RUNTIME:       pad:
; RUNTIME-NEXT:    %cp = cleanuppad within none []
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) [ "funclet"(token %cp) ]
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) [ "funclet"(token %cp) ]
; RUNTIME-NEXT:    cleanupret from %cp unwind to caller
; RUNTIME-LABEL: define void @catch(
; RUNTIME:       handler:
; RUNTIME-NEXT:    %cp = catchpad within %cs
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) [ "funclet"(token %cp) ]
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) [ "funclet"(token %cp) ]
; RUNTIME-NEXT:    catchret from %cp to label %done

; Each funclet still calls both slow paths after WinEHPrepare (the code
; outside the funclets has no monitor operation).
; ASM-LABEL: "?dtor${{[0-9]+}}@?0?cleanup@4HA":
; ASM-DAG:   callq jitlock_rt_monitor_enter
; ASM-DAG:   callq jitlock_rt_monitor_exit
; ASM:       .seh_endproc
; ASM-LABEL: "?catch${{[0-9]+}}@?0?catch@4HA":
; ASM-DAG:   callq jitlock_rt_monitor_enter
; ASM-DAG:   callq jitlock_rt_monitor_exit
; ASM:       .seh_endproc
