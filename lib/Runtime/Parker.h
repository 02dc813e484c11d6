//===- Parker.h - Blocking a thread on a futex word -------------*- C++ -*-===//
#ifndef JITLOCK_RUNTIME_PARKER_H
#define JITLOCK_RUNTIME_PARKER_H

#include "Arch/Arch.h"

#include <atomic>
#include <cstdint>

namespace jitlock {

/// Sleeps while `Word` holds `Value` or until the absolute CLOCK_MONOTONIC
/// deadline `DeadlineNs` (0: none) passes. May return early; callers loop on
/// their own condition. Returns false when the deadline has passed.
bool parkWhile(std::atomic<uint32_t> &Word, uint32_t Value,
               uint64_t DeadlineNs);

/// Wakes every thread sleeping on `Word`. The caller stores the new value
/// first (with release ordering), so a sleeper either sees it or is woken.
void wakeAll(std::atomic<uint32_t> &Word);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t monotonicNowNs();

/// One iteration of a spin loop: a pause hint to the core.
inline void spinPause() { arch::spinPause(); }

} // namespace jitlock

#endif
