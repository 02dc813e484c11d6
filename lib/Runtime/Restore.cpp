//===- Restore.cpp - Deopt-time lock restoration --------------------------===//
//
// A compiled frame may have elided locks: nested re-entry of an object it
// already holds, or objects that never escape. When the frame is deoptimized
// its elided locks are re-acquired so that the lock stack and monitors are
// exactly what they would have been without elision.
//
// The frame is normally the youngest lock-holding frame of its thread, so its
// own lock stack entries are the top ones. Restoring pops them and replays the
// frame's complete monitor list, outermost first, through the same rules as
// monitor enter: a push for a new or adjacent object, inflation for
// non-adjacent re-entry and for a full stack. Entries below the frame's are
// never moved. When the frame is not the youngest (JITLOCK_RELOCK_NOT_YOUNGEST)
// its position on the lock stack is unknown, so elided holds go to monitors.
//
// Acquiring an object nobody holds is the only step that can fail, so it is
// done first, for every elided object, before anything else changes. In heavy
// mode that acquisition inflates the object (H1 in Synchronizer.cpp), so its
// elided holds end up in a monitor rather than on the lock stack.
//
// Only the caller restoring its own frame waits, and a collector may move
// objects while it is parked (MC1). So it finds where it holds each object
// before acquiring any, and keeps each object it holds where a collector
// finds it: before parking, an acquired fast lock, which has no lock stack
// entry yet, moves into a monitor. After the acquisitions it reads every
// object's current address from where it holds it (its lock stack slot, or
// its monitor's object) rather than from the entries, and the restored lock
// stack and monitors hold those addresses: the ones the caller's own
// references hold after the collection. An object listed after the one the
// caller parks for is named only by its entry, so it must not move
// meanwhile.
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include "ObjectHeader.h"
#include "Parker.h"
#include "Synchronizer.h"

#include <vector>

using namespace jitlock;

namespace {

/// An elided object acquired for the owner by this call. Its first hold is
/// the acquisition itself: a fast lock without a lock stack entry yet
/// (Via == null), or a monitor with recursion count 0.
struct Acquisition {
  void *Obj;
  Monitor *Via;
  bool FirstHoldPlaced = false;
};

/// Where the owner holds an entry's object, which a collector keeps up to
/// date: a lock stack slot, a monitor it owns, or an acquisition.
struct Place {
  int Slot = -1;
  Monitor *Via = nullptr;
  int Acquired = -1;
};

class Restorer {
public:
  Restorer(jitlock_thread &Owner, bool OnBehalf)
      : Owner(Owner), LS(Owner), OnBehalf(OnBehalf) {}

  int run(const jitlock_relock_entry *Entries, size_t Count, bool Youngest);

private:
  Monitor *ownedMonitor(void *Obj) {
    uint64_t H = loadStableHeader(Obj);
    Monitor *M = monitorOfHeader(Obj, H);
    return M && M->isOwnedBy(Owner) ? M : nullptr;
  }
  int acquisitionOf(void *Obj) {
    for (size_t I = 0; I != Acquired.size(); ++I)
      if (Acquired[I].Obj == Obj)
        return int(I);
    return -1;
  }
  Acquisition *unplacedAcquisition(void *Obj) {
    for (Acquisition &A : Acquired)
      if (A.Obj == Obj && !A.FirstHoldPlaced)
        return &A;
    return nullptr;
  }

  int acquire(void *Obj);
  int acquireAll(const jitlock_relock_entry *Entries, size_t Count,
                 std::vector<Place> &Places);
  void rootAcquisitions();
  void *currentAddress(const Place &P);
  void releaseAcquired();
  void addFastHold(void *Obj);
  void addMonitorHold(void *Obj);

  jitlock_thread &Owner;
  LockStack LS;
  bool OnBehalf;
  std::vector<Acquisition> Acquired;
};

} // namespace

/// Gives each acquired fast lock a root before the caller parks: a monitor,
/// whose object a collector updates (MC1). Its first hold stays the
/// acquisition's.
void Restorer::rootAcquisitions() {
  for (Acquisition &A : Acquired)
    if (!A.Via)
      A.Via = inflateOwned(Owner, A.Obj);
}

/// Where the owner holds the object now: after a park, a collector may have
/// moved it, updating the slot or the monitor but not the entry (MC1).
void *Restorer::currentAddress(const Place &P) {
  if (P.Slot >= 0)
    return LS.at(P.Slot);
  Monitor *M = P.Via;
  if (P.Acquired >= 0) {
    Acquisition &A = Acquired[size_t(P.Acquired)];
    if (!A.Via)
      return A.Obj; // Fast-locked with no park since (rootAcquisitions).
    M = A.Via;
  }
  return M->object();
}

/// Takes an object the owner does not hold. Waits for it only when the owner
/// is the caller; a stopped owner cannot be made to wait.
int Restorer::acquire(void *Obj) {
  auto Header = headerOf(Obj);
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if (header::isUnlocked(H)) {
      if (Config.locking_mode == JITLOCK_LOCKING_HEAVY) {
        Monitor *M;
        Inflated Result = inflateUnlocked(Owner, Obj, H, M);
        if (Result == Inflated::OutOfMonitors)
          return JITLOCK_ENOMEM;
        if (Result == Inflated::Installed) {
          Acquired.push_back({Obj, M});
          return JITLOCK_OK;
        }
        continue;
      }
      if (Header.compare_exchange_strong(
              H, header::withLockBits(H, header::LockedValue),
              std::memory_order_acquire, std::memory_order_relaxed)) {
        Acquired.push_back({Obj, nullptr});
        return JITLOCK_OK;
      }
      continue;
    }
    Monitor *Named = monitorOfHeader(Obj, H);
    if (header::hasMonitor(H) && !Named)
      continue; // Deflated meanwhile.
    if (Named) {
      Monitor &M = *Named;
      if (takeInstalledMonitor(Owner, M, Obj)) {
        Acquired.push_back({Obj, &M});
        return JITLOCK_OK;
      }
      // Racing a deflation is not "held by another thread": start over.
      if (M.isDeflating() || loadStableHeader(Obj) != H) {
        spinPause();
        continue;
      }
    }
    // Held by another thread.
    if (OnBehalf)
      return JITLOCK_EBUSY;
    if (header::isFastLocked(H)) {
      if (inflateAnonymous(Owner, Obj, H) == Inflated::OutOfMonitors)
        return JITLOCK_ENOMEM;
      continue;
    }
    Monitor &M = *Named;
    rootAcquisitions();
    if (!enterMonitor(Owner, M, Obj))
      continue;
    // Keyed by the entry's address until currentAddress reads M's object.
    Acquired.push_back({Obj, &M});
    return JITLOCK_OK;
  }
}

/// Undoes every acquisition, innermost first.
void Restorer::releaseAcquired() {
  for (auto It = Acquired.rbegin(); It != Acquired.rend(); ++It) {
    if (It->Via)
      exitMonitor(*It->Via, Owner);
    else
      unlockUnlisted(Owner, It->Obj);
  }
  Acquired.clear();
}

/// One more hold of an object the owner holds fast-locked, placed on top of
/// the lock stack the way monitor enter (E2, E4 and the slow path) would.
void Restorer::addFastHold(void *Obj) {
  for (;;) {
    Monitor *M = monitorOwnedBy(Owner, Obj, loadStableHeader(Obj));
    if (M && !LS.contains(Obj)) {
      // Inflated already (here or before): the monitor counts the hold.
      M->incRecursions();
      return;
    }
    if (LS.isFull()) {
      inflateOwned(Owner, LS.at(0));
      continue;
    }
    if (LS.top() == Obj || !LS.contains(Obj)) {
      LS.push(Obj);
      return;
    }
    // Non-adjacent: the order cannot be expressed on the lock stack.
    inflateOwned(Owner, Obj)->incRecursions();
    return;
  }
}

/// One more hold, kept in the object's monitor.
void Restorer::addMonitorHold(void *Obj) {
  if (Acquisition *A = unplacedAcquisition(Obj)) {
    A->FirstHoldPlaced = true;
    if (!A->Via)
      inflateOwned(Owner, Obj); // The header is ours; count it in a monitor.
    return;
  }
  uint64_t H = loadStableHeader(Obj);
  Monitor *M = header::isFastLocked(H) ? inflateOwned(Owner, Obj)
                                       : monitorOwnedBy(Owner, Obj, H);
  if (LS.contains(Obj))
    M = inflateOwned(Owner, Obj);
  M->incRecursions();
}

/// Finds where the owner holds each entry's object, before any park, then
/// acquires the elided ones it does not hold, in list order (the order the
/// unelided code took them in, so no new deadlock).
int Restorer::acquireAll(const jitlock_relock_entry *Entries, size_t Count,
                         std::vector<Place> &Places) {
  for (size_t I = 0; I != Count; ++I) {
    Places[I].Slot = LS.find(Entries[I].obj);
    if (Places[I].Slot < 0)
      Places[I].Via = ownedMonitor(Entries[I].obj);
  }
  for (size_t I = 0; I != Count; ++I) {
    void *Obj = Entries[I].obj;
    if (Places[I].Slot >= 0 || Places[I].Via)
      continue;
    if (acquisitionOf(Obj) < 0)
      if (int Err = acquire(Obj))
        return Err;
    Places[I].Acquired = acquisitionOf(Obj);
  }
  return JITLOCK_OK;
}

int Restorer::run(const jitlock_relock_entry *Entries, size_t Count,
                  bool Youngest) {
  // The HELD entries must be what the owner holds: fast ones on its lock
  // stack (for the youngest frame, exactly its top entries, in order),
  // others in monitors it owns.
  std::vector<bool> HeldFast(Count, false);
  size_t NumHeldFast = 0;
  for (size_t I = 0; I != Count; ++I) {
    if (Entries[I].kind != JITLOCK_RELOCK_HELD)
      continue;
    if (LS.contains(Entries[I].obj)) {
      HeldFast[I] = true;
      ++NumHeldFast;
    } else if (!ownedMonitor(Entries[I].obj)) {
      return JITLOCK_EINVAL;
    }
  }
  if (Youngest) {
    if (NumHeldFast > LS.size())
      return JITLOCK_EINVAL;
    size_t Slot = LS.size() - NumHeldFast;
    for (size_t I = 0; I != Count; ++I)
      if (HeldFast[I] && LS.at(int(Slot++)) != Entries[I].obj)
        return JITLOCK_EINVAL;
  }

  std::vector<Place> Places(Count);
  if (int Err = acquireAll(Entries, Count, Places)) {
    releaseAcquired();
    return Err;
  }
  // From here on, the objects' current addresses (MC1).
  std::vector<void *> Current(Count);
  for (size_t I = 0; I != Count; ++I)
    Current[I] = currentAddress(Places[I]);
  for (size_t I = 0; I != Count; ++I)
    if (Places[I].Acquired >= 0)
      Acquired[size_t(Places[I].Acquired)].Obj = Current[I];

  if (!Youngest) {
    for (size_t I = 0; I != Count; ++I)
      if (Entries[I].kind == JITLOCK_RELOCK_ELIDED)
        addMonitorHold(Current[I]);
    return JITLOCK_OK;
  }

  // Pop the frame's own entries (its top ones, in list order) and replay
  // its whole list.
  for (size_t I = Count; I-- != 0;)
    if (HeldFast[I])
      LS.pop(Current[I]);
  for (size_t I = 0; I != Count; ++I) {
    void *Obj = Current[I];
    if (Entries[I].kind == JITLOCK_RELOCK_HELD) {
      if (HeldFast[I])
        addFastHold(Obj);
      continue;
    }
    if (Acquisition *A = unplacedAcquisition(Obj)) {
      A->FirstHoldPlaced = true;
      if (!A->Via)
        addFastHold(Obj); // The header is ours; this is its entry.
      continue;           // A monitor acquisition is its own first hold.
    }
    addFastHold(Obj);
  }
  return JITLOCK_OK;
}

int jitlock_rt_restore_locks(jitlock_thread *Owner,
                             const jitlock_relock_entry *Entries, size_t Count,
                             uint32_t Flags) {
  if (!Owner || !Owner->Attached)
    return misuse(JITLOCK_ENOT_ATTACHED, Owner, nullptr,
                  "restore-locks for a thread that is not attached");
  if ((Count && !Entries) || (Flags & ~JITLOCK_RELOCK_NOT_YOUNGEST))
    return misuse(JITLOCK_EINVAL, Owner, nullptr,
                  "restore-locks: bad entry list or flags");
  for (size_t I = 0; I != Count; ++I) {
    if (!Entries[I].obj)
      return misuse(JITLOCK_ENULL, Owner, nullptr,
                    "restore-locks: null object");
    if (Entries[I].kind > JITLOCK_RELOCK_ELIDED)
      return misuse(JITLOCK_EINVAL, Owner, Entries[I].obj,
                    "restore-locks: unknown entry kind");
  }
  // Every inflation the restore may need, taken up front (index storage):
  // it must not run out of monitors half-way.
  if (!reserveMonitors(2 * Count + LockStackCapacity))
    return misuse(JITLOCK_ENOMEM, Owner, nullptr,
                  "restore-locks: not enough free monitors for the frame "
                  "(index storage's monitor_capacity)");
  Restorer R(*Owner, /*OnBehalf=*/currentThread() != Owner);
  int Status = R.run(Entries, Count,
                     /*Youngest=*/!(Flags & JITLOCK_RELOCK_NOT_YOUNGEST));
  releaseReservation();
  if (Status == JITLOCK_ENOMEM)
    return misuse(JITLOCK_ENOMEM, Owner, nullptr,
                  "restore-locks: no monitor left (index storage)");
  if (Status == JITLOCK_EINVAL)
    return misuse(JITLOCK_EINVAL, Owner, nullptr,
                  "restore-locks: HELD entries do not match the owner's locks");
  return Status;
}
