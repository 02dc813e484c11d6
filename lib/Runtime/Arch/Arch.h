//===- Arch/Arch.h - The host architecture's details ------------*- C++ -*-===//
//
// Picks the header for the architecture being compiled for. Each provides,
// in namespace jitlock::arch: spinPause(), threadPointer() and
// interruptedStackPointer(const ucontext_t &).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_ARCH_H
#define JITLOCK_RUNTIME_ARCH_ARCH_H

#if defined(__x86_64__)
#include "X86_64.h"
#elif defined(__aarch64__)
#include "AArch64.h"
#else
#error "jitlock's runtime supports x86_64 and AArch64"
#endif

#endif
