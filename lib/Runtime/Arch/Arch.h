//===- Arch/Arch.h - The host architecture's primitives ---------*- C++ -*-===//
//
// Selects the one header that gives the runtime what depends on the
// instruction set: the spin-loop pause hint, the thread pointer (which `tls`
// mode's offsets are relative to) and the stack pointer of a signal's
// interrupted context. Each header defines the same three functions in
// jitlock::arch; a port adds a header and a branch here.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ARCH_ARCH_H
#define JITLOCK_RUNTIME_ARCH_ARCH_H

#if defined(__x86_64__)
#include "X86_64.h"
#elif defined(__aarch64__)
#include "AArch64.h"
#else
#error "jitlock's runtime supports x86_64 and AArch64 only"
#endif

#endif
