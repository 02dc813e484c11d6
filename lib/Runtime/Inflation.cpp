//===- Inflation.cpp - Installing a monitor in a header -------------------===//
//
// Inflation: a monitor made from an object's unlocked or fast-locked header
// and CASed into it, for a contender (with an anonymous owner), for the
// fast-lock owner (E2's full lock stack, non-adjacent re-entry, wait), and
// H1 in heavy mode; and the anonymous owner's fix-up. The steps are those
// of the protocol comment at the top of Synchronizer.cpp (H1, and the
// storage rules under "Storage"; A5 undoes what this does).
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

#include "Reservation.h"

namespace jitlock {

using namespace header;

//===----------------------------------------------------------------------===//
// Inflation
//===----------------------------------------------------------------------===//

/// The step every inflation shares: a monitor made from `Obj`'s header `H`
/// (unlocked or fast-locked), CASed into the header and published. On a
/// race `H` is the header found instead.
static Inflated installMonitor(jitlock_thread &T, void *Obj, uint64_t &H,
                               uintptr_t OwnerWord, uint64_t Recursions,
                               Monitor *&Out) {
  auto Header = headerOf(Obj);
  // Table storage keys monitors by the identity hash, which the header
  // keeps while inflated: installed first, as a hash request would.
  if (storage::isTable() && !hashOf(H)) {
    // The caller's generator: `T` may be a stopped thread restore-locks
    // acts for.
    uint64_t Hashed = withHash(H, nextHash(currentThread()));
    if (!Header.compare_exchange_strong(H, Hashed, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
      return Inflated::Raced;
    H = Hashed;
  }
  Monitor *M =
      newMonitor(Obj, withLockBits(H, UnlockedValue), OwnerWord, Recursions);
  if (!M)
    return Inflated::OutOfMonitors;
  // Release publishes the monitor's fields with the header.
  if (!Header.compare_exchange_strong(H, storage::encode(H, M),
                                      std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
    discardMonitor(M);
    return Inflated::Raced;
  }
  storage::publish(Obj, M);
  bump(T.Stats.Inflations);
  Out = M;
  return Inflated::Installed;
}

Monitor *inflateOwned(jitlock_thread &T, void *Obj) {
  reservation::revokeOwn(T, Obj);
  LockStack LS(T);
  uint64_t H = loadStableHeader(Obj);
  for (;;) {
    if (Monitor *M = monitorOfHeader(Obj, H)) {
      // A contender inflated it with an anonymous owner: that owner is T.
      unsigned Holds = LS.removeAll(Obj);
      M->setRecursions(Holds ? Holds - 1 : 0);
      M->setOwnerFromAnonymous(T);
      return M;
    }
    unsigned Holds = LS.count(Obj);
    Monitor *M = nullptr;
    switch (installMonitor(T, Obj, H, owner::encode(&T), Holds ? Holds - 1 : 0,
                           M)) {
    case Inflated::Installed:
      LS.removeAll(Obj);
      return M;
    case Inflated::OutOfMonitors:
      return nullptr;
    case Inflated::Raced:
      // A hash install, or a contender inflated it.
      if (isEmbedderOwned(H))
        H = loadStableHeader(Obj);
      break;
    }
  }
}

Inflated inflateAnonymous(jitlock_thread &T, void *Obj, uint64_t H) {
  // Registered first: once the header names it, the fast-lock owner may fix
  // the owner to itself and then detach or exit, and must find it then.
  Monitor *M;
  return installMonitor(T, Obj, H, owner::AnonymousOwner, 0, M);
}

Inflated inflateUnlocked(jitlock_thread &T, void *Obj, uint64_t H,
                         Monitor *&M) {
  // H1.
  Inflated Result = installMonitor(T, Obj, H, owner::encode(&T), 0, M);
  if (Result == Inflated::Installed)
    bump(T.Stats.MonitorEnters);
  return Result;
}

} // namespace jitlock
