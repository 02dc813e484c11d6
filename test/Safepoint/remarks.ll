; Remarks under -pass-remarks=jitlock, each naming its function: one per
; poll lowered inline, and with polls=auto one per poll placed; the loops
; and returns left without a poll are analysis remarks
; (-pass-remarks-analysis) that say why; no-inline polls are missed remarks.
; The YAML records carry the function.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes=jitlock-lower -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EXPLICIT
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=AUTO
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -pass-remarks-analysis=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=ANALYSIS
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<no-inline>' -pass-remarks-missed=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=MISSED
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<polls=auto>' -pass-remarks-output=%t.yaml -disable-output %s
; RUN: FileCheck %s --check-prefix=YAML < %t.yaml
; The same from the default pipeline.
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='default<O2>' -pass-remarks=jitlock -disable-output %s 2>&1 \
; RUN:   | FileCheck %s --check-prefix=EXPLICIT

declare void @jitlock.safepoint.poll()
declare void @work()

define void @spin(ptr %p) {
entry:
  br label %loop
loop:
  call void @jitlock.safepoint.poll()
  %x = load volatile i1, ptr %p
  br i1 %x, label %loop, label %out
out:
  ret void
}

define void @busy(ptr %p) {
entry:
  br label %loop
loop:
  %x = load volatile i1, ptr %p
  br i1 %x, label %loop, label %out
out:
  call void @work()
  ret void
}

; EXPLICIT:     remark: {{.*}}safepoint poll in 'spin' lowered to an inline poll-word test
; EXPLICIT-NOT: remark

; AUTO-DAG:     remark: {{.*}}safepoint poll placed in 'spin' before the return in %out
; AUTO-DAG:     remark: {{.*}}safepoint poll placed in 'busy' on the loop back-edge from %loop to %loop
; AUTO-DAG:     remark: {{.*}}safepoint poll in 'spin' lowered to an inline poll-word test
; AUTO-DAG:     remark: {{.*}}safepoint poll in 'spin' lowered to an inline poll-word test
; AUTO-DAG:     remark: {{.*}}safepoint poll in 'busy' lowered to an inline poll-word test
; AUTO-NOT:     remark: {{.*}}no poll placed

; ANALYSIS-DAG: remark: {{.*}}no poll placed in 'spin' on the loop back-edge from %loop to %loop: every iteration polls already (a safepoint poll in %loop)
; ANALYSIS-DAG: remark: {{.*}}no poll placed in 'busy' before the return in %out: it follows a call to @work in %out
; ANALYSIS-NOT: placed in

; MISSED:       remark: {{.*}}safepoint poll in 'spin' sent to the runtime: inline fast paths are disabled (no-inline)

; YAML-DAG:     {{^}}--- !Passed{{$}}
; YAML-DAG:     {{^}}Name: BackEdgePoll{{$}}
; YAML-DAG:     {{^}}Name: ReturnPoll{{$}}
; YAML-DAG:     {{^}}Name: Inlined{{$}}
; YAML-DAG:     {{^}}--- !Analysis{{$}}
; YAML-DAG:     {{^}}Name: BackEdgePolls{{$}}
; YAML-DAG:     {{^}}Name: ReturnPolls{{$}}
; YAML-DAG:     {{^}}Function: spin{{$}}
; YAML-DAG:     {{^}}Function: busy{{$}}
