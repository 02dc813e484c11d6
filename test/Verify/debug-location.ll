; With debug locations (clang -g), a jitlock-verify error starts with the
; source position, file:line:column, as a compiler's diagnostic does; a
; function-level error with the function's file:line.
;
; RUN: not opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -disable-output %s 2>&1 | FileCheck %s

; CHECK: jitlock: vm.c:8:5: in function 'unbalanced': monitor exit without a matching enter on some path:

@counter = global { i64, i64 } { i64 1, i64 0 }

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @unbalanced() !dbg !5 {
  call void @jitlock.monitor.enter(ptr @counter), !dbg !10
  call void @jitlock.monitor.exit(ptr @counter), !dbg !8
  call void @jitlock.monitor.exit(ptr @counter), !dbg !11
  ret void, !dbg !9
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}

!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: "clang", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "vm.c", directory: "/src")
!2 = !{}
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "unbalanced", scope: !1, file: !1, line: 5, type: !6, scopeLine: 5, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocation(line: 7, column: 5, scope: !5)
!9 = !DILocation(line: 9, column: 1, scope: !5)
!10 = !DILocation(line: 6, column: 5, scope: !5)
!11 = !DILocation(line: 8, column: 5, scope: !5)
