//===- Arch/AArch64.h - AArch64 details the runtime uses --------*- C++ -*-===//
//
// Included through Arch/Arch.h only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_AARCH64_H
#define JITLOCK_RUNTIME_ARCH_AARCH64_H

#if !defined(__aarch64__)
#error "Arch/AArch64.h included for an architecture other than AArch64"
#endif

#include <cstdint>
#include <ucontext.h>

namespace jitlock::arch {

/// One iteration of a spin loop: YIELD hints that the thread is waiting.
inline void spinPause() { asm volatile("yield" ::: "memory"); }

/// The thread pointer, which initial-exec TLS offsets are relative to.
inline char *threadPointer() {
  char *TP;
  asm("mrs %0, tpidr_el0" : "=r"(TP));
  return TP;
}

/// The stack pointer of the code a signal interrupted.
inline uintptr_t interruptedStackPointer(const ucontext_t &UC) {
  return uintptr_t(UC.uc_mcontext.sp);
}

} // namespace jitlock::arch

#endif
