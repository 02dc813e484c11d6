//===- Reservation.h - Reserved locking: R1-R4 and revocation ---*- C++ -*-===//
//
// The reserved locking mode's steps (R1-R4, revokeOwn; the protocol comment
// at the top of Synchronizer.cpp states them). The header tests are inline,
// for enter and exit; revocation and the thread bookkeeping live in
// Reservation.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_RESERVATION_H
#define JITLOCK_RUNTIME_RESERVATION_H

#include "Config.h"
#include "ObjectHeader.h"
#include "Thread.h"

#include <atomic>
#include <cstdint>

namespace jitlock::reservation {

inline bool enabled() {
  return Config.locking_mode == JITLOCK_LOCKING_RESERVED;
}

/// The reservation field's bits in a header under configuration `C`; 0
/// unless it reserves. The layout's reservable_value is this mask.
inline uint64_t fieldMaskFor(const jitlock_rt_config &C) {
  if (C.locking_mode != JITLOCK_LOCKING_RESERVED)
    return 0;
  return (~uint64_t(0) >> (64 - C.reserve_bits)) << C.reserve_shift;
}

/// The reservation field's bits in a header; 0 unless reserving.
inline uint64_t fieldMask() { return fieldMaskFor(Config); }

/// The thread's tag (Thread.h): the owner reads it, a handshake run for the
/// stopped owner may set it to ~0.
inline uint64_t tagOf(const jitlock_thread &T) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(T.ReserveTag))
      .load(std::memory_order_relaxed);
}

/// R1/R4's test: `H` is reserved to `T`. Never true outside the mode, where
/// the tag is ~0 and the mask keeps only the lock bits.
inline bool reservedTo(const jitlock_thread &T, uint64_t H) {
  return (H & (header::LockMask | fieldMask())) == tagOf(T);
}

/// `H` is reserved to some thread: 01 with the field neither 0 nor all ones.
inline bool isReserved(uint64_t H) {
  uint64_t F = fieldMask();
  return header::isUnlocked(H) && (H & F) != 0 && (H & F) != F;
}

/// `H` is reservable and not reserved yet: 01 with the field all ones.
inline bool isReservable(uint64_t H) {
  uint64_t F = fieldMask();
  return F != 0 && header::isUnlocked(H) && (H & F) == F;
}

/// R2 for `T`, which may reserve, on `Obj`'s reservable header `H`: one
/// CAS. False when the header changed.
bool reserve(jitlock_thread &T, void *Obj, uint64_t H);

/// Ends the reservation of `Obj`'s header `H`, reserved to a thread other
/// than `T` or to `T` with its tag ~0 (R3; no handshake when that thread
/// detached or is `T`). `T` is the thread the caller acts for: itself, or a
/// thread it stopped (restore-locks). JITLOCK_OK when the caller may start
/// over at E1 (whoever revoked), JITLOCK_ESTATE when it runs a handshake
/// operation and so can request none.
int revoke(jitlock_thread &T, void *Obj, uint64_t H);

/// What enter() does with `Obj`'s header `H`, after E1-E2, in this mode.
enum class EnterStep {
  Lightweight, ///< neither reserved nor to be reserved: E3-E5 as always
  Entered,     ///< R1 or R2 pushed `Obj`: done
  StartOver,   ///< revoked (R3), or R2's CAS lost: back to E1
  Failed       ///< revocation impossible here (revoke's status)
};
inline EnterStep enter(jitlock_thread &T, void *Obj, uint64_t H, int &Status) {
  if (reservedTo(T, H)) { // R1
    LockStack(T).push(Obj);
    bump(T.Stats.ReservedEnters);
    return EnterStep::Entered;
  }
  if (isReserved(H)) { // R3
    Status = revoke(T, Obj, H);
    return Status == JITLOCK_OK ? EnterStep::StartOver : EnterStep::Failed;
  }
  if (!isReservable(H) || tagOf(T) == ~uint64_t(0))
    return EnterStep::Lightweight;
  if (!reserve(T, Obj, H)) // R2
    return EnterStep::StartOver;
  LockStack(T).push(Obj);
  return EnterStep::Entered;
}

/// R4's test, for an exit that found `H` after popping: true (and counted)
/// when `H` is still reserved to `T`, so that the exit is done.
inline bool exitReserved(jitlock_thread &T, uint64_t H) {
  if (!reservedTo(T, H))
    return false;
  bump(T.Stats.ReservedExits);
  return true;
}

/// Restore-locks, before it starts: ends `Obj`'s reservation unless `Owner`
/// holds it reserved (then it is a lock stack entry like a fast lock). R3 or
/// R3c; revoke's status.
int revokeUnlessHeld(jitlock_thread &Owner, void *Obj);

/// revokeOwn: `Obj`, which `T` holds, stops being reserved to `T` and is
/// fast-locked by it (no-op for any other header). Before an inflation.
void revokeOwn(jitlock_thread &T, void *Obj);

/// Bookkeeping of the index -> thread map (thread registry lock held).
void threadAttached(jitlock_thread &T);
void threadDetached(jitlock_thread &T);

/// The thread holding `Obj`, whose header `H` is reserved, on its lock
/// stack, and how many times (a query; null and 0 when none does).
jitlock_thread *holderOf(const void *Obj, uint64_t H, uint64_t *Holds);

/// The revocation counters (jitlock_rt_fill_reservation_stats adds the
/// threads' own).
jitlock_reservation_stats revocationStats();

} // namespace jitlock::reservation

#endif
