//===- StackGuard.h - Stack guard zones and stack banging -------*- C++ -*-===//
//
// The thread hooks of the stack guard zones, and what their three files
// share:
//   StackGuard.cpp     the zones, the watermark, jitlock_rt_stack_bang and
//                      the overflow handler;
//   StackBackstop.cpp  the SIGSEGV backstop and the alternate signal stacks;
//   StackRecovery.cpp  jitlock_rt_call_guarded and the release of the holds
//                      an overflow abandons.
// See docs/stack-banging.md.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_STACKGUARD_H
#define JITLOCK_RUNTIME_STACKGUARD_H

#include "Thread.h"

#include <atomic>
#include <cstdint>

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

//===----------------------------------------------------------------------===//
// Shared by the stack guard's files
//===----------------------------------------------------------------------===//

constexpr uint32_t zoneBit(uint32_t Zone) { return 1u << Zone; }
inline constexpr uint32_t GuardZones = zoneBit(JITLOCK_ZONE_RED) |
                                       zoneBit(JITLOCK_ZONE_YELLOW) |
                                       zoneBit(JITLOCK_ZONE_RESERVED);

inline std::atomic_ref<uintptr_t> stackWatermark(jitlock_thread &T) {
  return std::atomic_ref<uintptr_t>(T.StackWatermark);
}

/// The caller's frame address: inlined, so that it is the caller's.
[[gnu::always_inline]] inline uintptr_t currentSp() {
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
}

inline uintptr_t alignDown(uintptr_t V, uintptr_t Page) {
  return V & ~(Page - 1);
}
inline uintptr_t alignUp(uintptr_t V, uintptr_t Page) {
  return alignDown(V + Page - 1, Page);
}

/// [Lo, Hi) of a guard zone.
void zoneRange(const StackState &S, uint32_t Zone, uintptr_t &Lo,
               uintptr_t &Hi);
/// mprotects one guard zone and records it in S.ProtectedZones.
bool protectZone(StackState &S, uint32_t Zone, bool Protect);
/// Protects again the zones the backstop unprotected, unless the caller's
/// frame is itself below safe_limit.
void reprotect(StackState &S);
/// The public view of T's stack.
void fillStackInfo(jitlock_thread &T, jitlock_stack_info &I);

/// Tells the overflow handler (the embedder's, or the default unwind to the
/// innermost guarded call); never returns.
[[noreturn]] void reportOverflow(jitlock_thread &T, uint32_t Zone, uintptr_t Sp,
                                 uintptr_t Fault, uint32_t FromSignal);
/// Prints "jitlock: fatal: stack overflow ..." with `Why` appended, async-
/// signal-safely, and aborts.
[[noreturn]] void fatalOverflow(const jitlock_stack_overflow &I,
                                const char *Why);

/// Whether the calling thread was running root enumeration callbacks
/// (Queries.cpp) when a stack overflow abandoned them; clears that mark.
bool takeAbandonedRootVisit();

/// Installs the process's SIGSEGV backstop once; false if it cannot.
bool installBackstop();
/// Maps and installs the calling thread's alternate signal stack, with a
/// guard page below it, remembering the one it replaces.
bool installAltStack(StackState &S);
/// Puts the previous alternate signal stack back and unmaps ours.
void removeAltStack(StackState &S);

} // namespace jitlock

#endif
