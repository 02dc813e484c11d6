//===- Arch/X86_64.h - x86_64 primitives ------------------------*- C++ -*-===//
//
// Included through Arch.h only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_X86_64_H
#define JITLOCK_RUNTIME_ARCH_X86_64_H

#if !defined(__x86_64__)
#error "Arch/X86_64.h included on another architecture; include Arch/Arch.h"
#endif

#include <cstdint>
#include <ucontext.h>

namespace jitlock::arch {

/// One iteration of a spin loop: a pause hint to the core.
inline void spinPause() { __builtin_ia32_pause(); }

/// The thread pointer: the TCB's self pointer at %fs:0 (TLS variant II).
inline char *threadPointer() {
  char *TP;
  asm("mov %%fs:0, %0" : "=r"(TP));
  return TP;
}

/// The stack pointer when the signal interrupted the thread.
inline uintptr_t interruptedStackPointer(const ucontext_t &UC) {
  return uintptr_t(UC.uc_mcontext.gregs[REG_RSP]);
}

} // namespace jitlock::arch

#endif
