//===- Arch/AArch64.h - AArch64 primitives ----------------------*- C++ -*-===//
//
// Included through Arch.h only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_AARCH64_H
#define JITLOCK_RUNTIME_ARCH_AARCH64_H

#if !defined(__aarch64__)
#error "Arch/AArch64.h included on another architecture; include Arch/Arch.h"
#endif

#include <cstdint>
#include <ucontext.h>

namespace jitlock::arch {

/// One iteration of a spin loop: a pause hint to the core.
inline void spinPause() { asm volatile("yield" ::: "memory"); }

/// The thread pointer: TPIDR_EL0 (TLS variant I).
inline char *threadPointer() {
  char *TP;
  asm("mrs %0, tpidr_el0" : "=r"(TP));
  return TP;
}

/// The stack pointer when the signal interrupted the thread.
inline uintptr_t interruptedStackPointer(const ucontext_t &UC) {
  return uintptr_t(UC.uc_mcontext.sp);
}

} // namespace jitlock::arch

#endif
