//===- StackGuard.h - Stack guard zones and stack banging -------*- C++ -*-===//
//
// The thread hooks of the stack guard zones; the C ABI functions themselves
// (jitlock_rt_stack_bang, jitlock_rt_call_guarded, ...) are in
// StackGuard.cpp. See docs/stack-banging.md.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_STACKGUARD_H
#define JITLOCK_RUNTIME_STACKGUARD_H

#include "Thread.h"

namespace jitlock {

/// Finds the calling thread's stack, lays out its zones, sets the watermark
/// to the stack base and, with Config.stack_guards, protects the guard zones
/// and installs the SIGSEGV backstop. Called by attach before the thread is
/// registered. Never fails: zones it cannot protect stay logical.
void attachStack(jitlock_thread &T);

/// Undoes attachStack: unprotects the zones (glibc reuses the stacks of
/// exited threads), removes the alternate signal stack and zeroes the
/// watermark. Called by detach and thread exit after unregistering.
void detachStack(jitlock_thread &T);

} // namespace jitlock

#endif
