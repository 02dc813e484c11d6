//===- AdaptiveSpin.h - How long a contended enter spins ---------*- C++
//-*-===//
//
// A contended enter spins for a while (Synchronizer.cpp, enterCounted)
// before it parks. How long is counted in rounds of PausesPerRound pause
// instructions; Config.spin_limit is the most rounds a spin may take. Each
// monitor remembers how many rounds to spin for, its spin budget, and adapts
// it to how the last spins on it went: it doubles after a spin that took the
// monitor and halves after one that ran out and had to park. A monitor whose
// critical sections outlast a spin soon stops burning CPU on them; one whose
// owners come and go quickly keeps spinning, which is much cheaper than a
// park and a wake-up.
//
// The budget stays within [floorRounds(Limit), Limit], where Limit is
// Config.spin_limit. The floor keeps a short spin, so that a monitor whose
// spins failed for a while notices when they start to succeed again; a
// limit of 0 turns spinning off altogether.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_ADAPTIVESPIN_H
#define JITLOCK_RUNTIME_ADAPTIVESPIN_H

#include <cstdint>

namespace jitlock::spin {

/// The pause instructions of one round of spinning.
inline constexpr uint32_t PausesPerRound = 32;

/// The fewest rounds a spin budget shrinks to (a few µs), unless the limit
/// is lower.
inline constexpr uint32_t FloorRounds = 4;

/// What a monitor's budget starts at: the limit, whatever it is. The first
/// contention of a monitor spins in full and the budget adapts from there.
inline constexpr uint32_t InitialBudget = UINT32_MAX;

inline uint32_t floorRounds(uint32_t Limit) {
  return Limit < FloorRounds ? Limit : FloorRounds;
}

/// The rounds to spin for, from a monitor's stored budget: clamped, because
/// the monitor may have been reused from another object, or its budget
/// written under another limit.
inline uint32_t budget(uint32_t Stored, uint32_t Limit) {
  if (Stored > Limit)
    return Limit;
  uint32_t Floor = floorRounds(Limit);
  return Stored < Floor ? Floor : Stored;
}

/// The budget after a spin of budget(Stored, Limit) rounds that took the
/// monitor (`Acquired`) or ran out.
inline uint32_t adapt(uint32_t Stored, bool Acquired, uint32_t Limit) {
  uint32_t Rounds = budget(Stored, Limit);
  if (Acquired)
    return Rounds > Limit - Rounds ? Limit : 2 * Rounds;
  uint32_t Half = Rounds / 2, Floor = floorRounds(Limit);
  return Half < Floor ? Floor : Half;
}

} // namespace jitlock::spin

#endif
