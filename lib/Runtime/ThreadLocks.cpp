//===- ThreadLocks.cpp - Operations on all of a thread's locks ------------===//
//
// Whether a thread holds any lock, and releasing all of them when its OS
// thread exits attached: its lock stack innermost first (X1-X4, as the
// runtime's exit does them), then every monitor it owns (N3, XQ). Steps as
// in the protocol comment at the top of Synchronizer.cpp.
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

namespace jitlock {

//===----------------------------------------------------------------------===//
// Whole-thread operations
//===----------------------------------------------------------------------===//

bool holdsAnyLock(jitlock_thread &T) {
  if (!LockStack(T).isEmpty())
    return true;
  bool Owns = false;
  forEachMonitor([&](Monitor &M) { Owns |= M.isOwnedBy(T); });
  return Owns;
}

unsigned releaseAllLocks(jitlock_thread &T) {
  unsigned Released = 0;
  LockStack LS(T);
  // Innermost first, as the frames would have.
  while (!LS.isEmpty()) {
    exitObject(T, LS.top());
    ++Released;
  }
  // Monitors: collect under the registry lock, release outside it, since a
  // release may take queue locks and wake threads.
  for (;;) {
    Monitor *Owned = nullptr;
    forEachMonitor([&](Monitor &M) {
      if (!Owned && M.isOwnedBy(T))
        Owned = &M;
    });
    if (!Owned)
      break;
    Owned->setRecursions(0);
    releaseMonitor(*Owned);
    ++Released;
  }
  return Released;
}

} // namespace jitlock
