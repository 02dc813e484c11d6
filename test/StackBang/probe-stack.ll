; Every mode gives a checked function "probe-stack"="inline-asm": its
; prologue then touches each page of a frame larger than a page (see the
; bigframe functions of x86-64.ll and aarch64.ll), so a frame bigger than the
; shadow zone cannot jump over the guard zones. A probe function the
; frontend chose itself also probes, and is kept. Functions without
; "jitlock-stack-bang" get nothing.
;
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=watermark>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=always>' -S %s | FileCheck %s
; RUN: opt -load-pass-plugin=%shlibdir/JitlockPlugin.so \
; RUN:   -passes='jitlock-lower<bang=none>' -S %s | FileCheck %s

define void @checked() "jitlock-stack-bang" {
  ret void
}

define void @own_probe() "jitlock-stack-bang" "probe-stack"="__my_probestack" {
  ret void
}

define void @unchecked() {
  ret void
}

; CHECK: define void @checked() #[[INLINE:[0-9]+]]
; CHECK: define void @own_probe() #[[OWN:[0-9]+]]
; CHECK: define void @unchecked() {
; CHECK: attributes #[[INLINE]] = { "probe-stack"="inline-asm" }
; CHECK: attributes #[[OWN]] = { "probe-stack"="__my_probestack" }
