//===- Arch/X86_64.h - x86_64 details the runtime uses ----------*- C++ -*-===//
//
// Included through Arch/Arch.h only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_X86_64_H
#define JITLOCK_RUNTIME_ARCH_X86_64_H

#if !defined(__x86_64__)
#error "Arch/X86_64.h included for an architecture other than x86_64"
#endif

#include <cstdint>
#include <ucontext.h>

namespace jitlock::arch {

/// One iteration of a spin loop: PAUSE frees the core for its sibling.
inline void spinPause() { __builtin_ia32_pause(); }

/// The thread pointer, which initial-exec TLS offsets are relative to.
inline char *threadPointer() {
  char *TP;
  asm("mov %%fs:0, %0" : "=r"(TP));
  return TP;
}

/// The stack pointer of the code a signal interrupted.
inline uintptr_t interruptedStackPointer(const ucontext_t &UC) {
  return uintptr_t(UC.uc_mcontext.gregs[REG_RSP]);
}

} // namespace jitlock::arch

#endif
