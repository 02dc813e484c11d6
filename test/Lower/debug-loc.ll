; The lowered code carries the !dbg location of the monitor call it replaces:
; every instruction of an enter's fast and slow paths has the enter's
; location, and every one of an exit's the exit's, so that a profile or a
; debugger attributes the fast path, the CAS and the runtime call to the
; synchronized statement. The no-inline runtime call and a lowered invoke
; keep it too.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -S %s | FileCheck %s --check-prefix=RUNTIME

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @work()
declare i32 @__gxx_personality_v0(...)

define void @f(ptr %o) !dbg !5 {
entry:
  call void @work(), !dbg !8
  call void @jitlock.monitor.enter(ptr %o), !dbg !9
  call void @work(), !dbg !10
  call void @jitlock.monitor.exit(ptr %o), !dbg !11
  ret void, !dbg !12
}

define void @g(ptr %o) personality ptr @__gxx_personality_v0 !dbg !13 {
entry:
  invoke void @jitlock.monitor.enter(ptr %o) to label %ok unwind label %lp, !dbg !14
ok:
  call void @jitlock.monitor.exit(ptr %o), !dbg !15
  ret void, !dbg !15
lp:
  %x = landingpad { ptr, i32 } cleanup
  resume { ptr, i32 } %x
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_Java, file: !1, producer: "jit", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "Counter.java", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !DISubroutineType(types: !{})
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, type: !4, scopeLine: 10, spFlags: DISPFlagDefinition, unit: !0)
!8 = !DILocation(line: 11, column: 3, scope: !5)
!9 = !DILocation(line: 12, column: 5, scope: !5)
!10 = !DILocation(line: 13, column: 7, scope: !5)
!11 = !DILocation(line: 14, column: 9, scope: !5)
!12 = !DILocation(line: 15, column: 1, scope: !5)
!13 = distinct !DISubprogram(name: "g", scope: !1, file: !1, line: 20, type: !4, scopeLine: 20, spFlags: DISPFlagDefinition, unit: !0)
!14 = !DILocation(line: 21, column: 3, scope: !13)
!15 = !DILocation(line: 22, column: 3, scope: !13)

; CHECK-LABEL: define void @f(
; CHECK:         call void @work(), !dbg [[BEFORE:![0-9]+]]
; CHECK-NEXT:    %jitlock.header = load atomic i64, ptr %o monotonic, align 8, !dbg [[ENTER:![0-9]+]]
; CHECK:         %jitlock.cas = cmpxchg ptr %o, {{.*}} acquire monotonic, align 8, !dbg [[ENTER]]
; CHECK:         store atomic ptr %o, ptr %jitlock.slot monotonic, align 8, !dbg [[ENTER]]
; CHECK:         %jitlock.owner.cas = cmpxchg {{.*}} acquire monotonic, align 8, !dbg [[ENTER]]
; CHECK:       jitlock.enter.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}}, !dbg [[ENTER]]
; CHECK-NEXT:    br label %jitlock.enter.done, !dbg [[ENTER]]
; CHECK:       jitlock.enter.done:
; CHECK-NEXT:    call void @work(), !dbg [[BODY:![0-9]+]]
; CHECK-NEXT:    %jitlock.top{{[0-9]*}} = load atomic i32, ptr %jitlock.thread monotonic, align 4, !dbg [[EXIT:![0-9]+]]
; CHECK:         %jitlock.cas{{[0-9]+}} = cmpxchg ptr %o, {{.*}} release monotonic, align 8, !dbg [[EXIT]]
; CHECK:         store atomic i64 0, ptr %jitlock.owner.addr{{[0-9]*}} release, align 8, !dbg [[EXIT]]
; CHECK:       jitlock.exit.slow:
; CHECK-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}}, !dbg [[EXIT]]
; CHECK-NEXT:    br label %jitlock.exit.done, !dbg [[EXIT]]
; CHECK:       jitlock.exit.done:
; CHECK-NEXT:    ret void, !dbg [[RET:![0-9]+]]

; CHECK-LABEL: define void @g(
; CHECK:         cmpxchg ptr %o, {{.*}} acquire monotonic, align 8, !dbg [[INVOKE:![0-9]+]]
; CHECK:         call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o) #{{[0-9]+}}, !dbg [[INVOKE]]

; CHECK-DAG:   [[BEFORE]] = !DILocation(line: 11, column: 3,
; CHECK-DAG:   [[ENTER]] = !DILocation(line: 12, column: 5,
; CHECK-DAG:   [[BODY]] = !DILocation(line: 13, column: 7,
; CHECK-DAG:   [[EXIT]] = !DILocation(line: 14, column: 9,
; CHECK-DAG:   [[RET]] = !DILocation(line: 15, column: 1,
; CHECK-DAG:   [[INVOKE]] = !DILocation(line: 21, column: 3,

; RUNTIME-LABEL: define void @f(
; RUNTIME:         call void @work(), !dbg [[BEFORE:![0-9]+]]
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_enter_slow(ptr %jitlock.thread, ptr %o), !dbg [[ENTER:![0-9]+]]
; RUNTIME-NEXT:    call void @work(), !dbg [[BODY:![0-9]+]]
; RUNTIME-NEXT:    call i32 @jitlock_rt_monitor_exit_slow(ptr %jitlock.thread, ptr %o), !dbg [[EXIT:![0-9]+]]
; RUNTIME-DAG:   [[ENTER]] = !DILocation(line: 12, column: 5,
; RUNTIME-DAG:   [[EXIT]] = !DILocation(line: 14, column: 9,
