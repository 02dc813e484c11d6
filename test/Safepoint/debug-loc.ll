; The lowered poll carries the !dbg location of the poll it replaces: the
; load, the test, the branch, the slow call and the branch back, so that a
; profile or a debugger attributes them to the poll's statement. A poll that
; polls=auto places takes the location of the terminator it goes before (the
; loop's back branch, or the ret).
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so -passes=jitlock-lower \
; RUN:   -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -S %s | FileCheck %s --check-prefix=AUTO

declare void @jitlock.safepoint.poll()
declare void @work()

define void @f() !dbg !5 {
entry:
  call void @work(), !dbg !8
  call void @jitlock.safepoint.poll(), !dbg !9
  call void @work(), !dbg !10
  ret void, !dbg !11
}

define void @g(i64 %n) !dbg !12 {
entry:
  br label %loop, !dbg !13
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1, !dbg !14
  %more = icmp ult i64 %i.next, %n, !dbg !14
  br i1 %more, label %loop, label %out, !dbg !15
out:
  ret void, !dbg !16
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!2, !3}

!0 = distinct !DICompileUnit(language: DW_LANG_Java, file: !1, producer: "jit", isOptimized: false, runtimeVersion: 0, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "Loop.java", directory: "/src")
!2 = !{i32 2, !"Debug Info Version", i32 3}
!3 = !{i32 7, !"Dwarf Version", i32 5}
!4 = !DISubroutineType(types: !{})
!5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 10, type: !4, scopeLine: 10, spFlags: DISPFlagDefinition, unit: !0)
!8 = !DILocation(line: 11, column: 3, scope: !5)
!9 = !DILocation(line: 12, column: 5, scope: !5)
!10 = !DILocation(line: 13, column: 7, scope: !5)
!11 = !DILocation(line: 14, column: 1, scope: !5)
!12 = distinct !DISubprogram(name: "g", scope: !1, file: !1, line: 20, type: !4, scopeLine: 20, spFlags: DISPFlagDefinition, unit: !0)
!13 = !DILocation(line: 21, column: 3, scope: !12)
!14 = !DILocation(line: 22, column: 5, scope: !12)
!15 = !DILocation(line: 23, column: 7, scope: !12)
!16 = !DILocation(line: 24, column: 1, scope: !12)

; CHECK-LABEL: define void @f(
; CHECK:         call void @work(), !dbg [[BEFORE:![0-9]+]]
; CHECK-NEXT:    %jitlock.poll.addr = getelementptr i8, ptr %jitlock.thread, i64 {{[0-9]+}}, !dbg [[POLL:![0-9]+]]
; CHECK-NEXT:    %jitlock.poll.word = load volatile i8, ptr %jitlock.poll.addr, align 1, !dbg [[POLL]]
; CHECK-NEXT:    %jitlock.poll.bit = and i8 %jitlock.poll.word, 1, !dbg [[POLL]]
; CHECK-NEXT:    %jitlock.poll.armed = icmp ne i8 %jitlock.poll.bit, 0, !dbg [[POLL]]
; CHECK-NEXT:    br i1 %jitlock.poll.armed, {{.*}}, !dbg [[POLL]]
; CHECK:       jitlock.poll.slow:
; CHECK-NEXT:    call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}}, !dbg [[POLL]]
; CHECK-NEXT:    br label %jitlock.poll.done, !dbg [[POLL]]
; CHECK:       jitlock.poll.done:
; CHECK-NEXT:    call void @work(), !dbg [[AFTER:![0-9]+]]
; CHECK-DAG:   [[BEFORE]] = !DILocation(line: 11, column: 3,
; CHECK-DAG:   [[POLL]] = !DILocation(line: 12, column: 5,
; CHECK-DAG:   [[AFTER]] = !DILocation(line: 13, column: 7,

; AUTO-LABEL: define void @g(
; AUTO:         %jitlock.poll.word = load volatile i8, ptr %jitlock.poll.addr, align 1, !dbg [[BACK:![0-9]+]]
; AUTO:         call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}}, !dbg [[BACK]]
; AUTO:         br i1 %more, label %loop, label %out, !dbg [[BACK]]
; AUTO:       out:
; AUTO:         %jitlock.poll.word{{[0-9]+}} = load volatile i8, ptr %jitlock.poll.addr{{[0-9]+}}, align 1, !dbg [[RET:![0-9]+]]
; AUTO:         call void @jitlock_rt_safepoint_poll(ptr %jitlock.thread) #{{[0-9]+}}, !dbg [[RET]]
; AUTO:         ret void, !dbg [[RET]]
; AUTO-DAG:   [[BACK]] = !DILocation(line: 23, column: 7,
; AUTO-DAG:   [[RET]] = !DILocation(line: 24, column: 1,
