//===- Reservation.cpp - Reserved locking: R2, R3 and revokeOwn -----------===//
//
// The steps of reserved locking that write a header: R2's CAS, R3's
// revocation (a handshake with the reserving thread, or none when that
// thread is gone or is the caller) and revokeOwn. The protocol comment at the
// top of Synchronizer.cpp states them; this file keeps the map from reserve
// index to thread that R3 needs, and the revocation counters.
//
//===----------------------------------------------------------------------===//
#include "Reservation.h"

#include "Safepoint.h"
#include "Synchronizer.h"

#include <mutex>
#include <sched.h>
#include <unordered_map>

namespace jitlock::reservation {

using namespace header;

namespace {

/// An index's thread, while it is attached, and the revocations its
/// reservations had (Config.reserve_revoke_limit).
struct IndexEntry {
  jitlock_thread *Thread;
  uint32_t Revocations;
};

/// Guards Indices. Taken after the thread registry lock (attach, detach and
/// the queries hold that one), never before it.
std::mutex IndexLock;
/// Attached threads by reserve index; an index missing here belongs to a
/// thread that detached (indices are not reused).
std::unordered_map<uint64_t, IndexEntry> Indices;

std::atomic<uint64_t> RevokedHeld{0}, RevokedUnheld{0}, RevokedDetached{0},
    ThreadsStopped{0};

void count(std::atomic<uint64_t> &C) {
  C.fetch_add(1, std::memory_order_relaxed);
}

uint64_t indexOf(uint64_t H) {
  return (H & fieldMask()) >> Config.reserve_shift;
}

uint64_t tagOfIndex(uint64_t Index) {
  return UnlockedValue | Index << Config.reserve_shift;
}

uint64_t withoutField(uint64_t H) { return H & ~fieldMask(); }

/// The attached thread with reserve index `Index`, or null.
jitlock_thread *threadOfIndex(uint64_t Index) {
  std::lock_guard<std::mutex> Guard(IndexLock);
  auto It = Indices.find(Index);
  return It == Indices.end() ? nullptr : It->second.Thread;
}

/// Whether `Obj`'s entries on `LS` are adjacent (E4's shape).
bool entriesAdjacent(const LockStack &LS, const void *Obj) {
  int First = -1, Last = -1;
  unsigned Count = 0;
  for (unsigned I = 0, E = LS.size(); I != E; ++I) {
    if (LS.at(int(I)) != Obj)
      continue;
    if (First < 0)
      First = int(I);
    Last = int(I);
    ++Count;
  }
  return Count == unsigned(Last - First + 1);
}

/// R3b's inflation of a held object whose fast-locked header is `H`: until
/// a monitor is installed, by this call or by a contender (either way with
/// an anonymous owner, which the holder fixes).
void inflateHeld(jitlock_thread &Holder, void *Obj, uint64_t H) {
  for (;;) {
    Inflated Result = inflateAnonymous(Holder, Obj, H);
    if (Result == Inflated::Installed)
      return;
    if (Result == Inflated::OutOfMonitors)
      sched_yield();
    H = loadStableHeader(Obj);
    if (hasMonitor(H))
      return;
  }
}

/// R3a-R3c for `Obj` while its header is reserved to `Index`, whose thread
/// `Holder` is stopped (or is the caller). True when this call revoked it.
bool revokeFor(jitlock_thread &Holder, void *Obj, uint64_t Index) {
  auto Header = headerOf(Obj);
  const uint64_t Tag = tagOfIndex(Index);
  const uint64_t Mask = LockMask | fieldMask();
  LockStack LS(Holder);
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if ((H & Mask) != Tag)
      return false;          // Revoked by someone else.
    if (!LS.contains(Obj)) { // R3c
      if (Header.compare_exchange_strong(H, withoutField(H),
                                         std::memory_order_acq_rel))
        break;
      continue; // A hash install.
    }
    uint64_t Locked = withLockBits(withoutField(H), LockedValue);
    if (!Header.compare_exchange_strong(H, Locked, std::memory_order_acq_rel))
      continue;
    if (!entriesAdjacent(LS, Obj)) // R3b, before the holder runs again.
      inflateHeld(Holder, Obj, Locked);
    count(RevokedHeld);
    return true;
  }
  count(RevokedUnheld);
  return true;
}

/// The reserve_revoke_limit: `Holder`, stopped, may not reserve any more;
/// what it holds reserved is revoked now, since its R1 and R4 no longer
/// recognize the header.
void stopReserving(jitlock_thread &Holder, uint64_t Index) {
  std::atomic_ref<uint64_t>(Holder.ReserveTag)
      .store(~uint64_t(0), std::memory_order_relaxed);
  LockStack LS(Holder);
  for (unsigned I = 0; I != LS.size(); ++I)
    revokeFor(Holder, LS.at(int(I)), Index);
  count(ThreadsStopped);
}

/// A revocation's handshake operation.
struct Revocation {
  void *Obj;
  uint64_t Index;
};

void revokeInHandshake(void *Arg, jitlock_thread *Target) {
  const Revocation &R = *static_cast<const Revocation *>(Arg);
  // The thread the contender looked up may have detached since, and its
  // storage gone to a thread with another index: then nothing to do here,
  // and the contender's next look finds the index detached.
  if (threadOfIndex(R.Index) != Target || !revokeFor(*Target, R.Obj, R.Index))
    return;
  uint32_t Revocations;
  {
    std::lock_guard<std::mutex> Guard(IndexLock);
    Revocations = ++Indices[R.Index].Revocations;
  }
  uint32_t Limit = Config.reserve_revoke_limit;
  if (Limit && Revocations >= Limit && tagOf(*Target) != ~uint64_t(0))
    stopReserving(*Target, R.Index);
}

} // namespace

bool reserve(jitlock_thread &T, void *Obj, uint64_t H) {
  uint64_t F = fieldMask();
  // Acquire: a reservation is the lock acquisition, after the last
  // lightweight owner's release.
  if (!headerOf(Obj).compare_exchange_strong(H, (H & ~F) | (tagOf(T) & F),
                                             std::memory_order_acquire,
                                             std::memory_order_relaxed))
    return false;
  bump(T.Stats.Reservations);
  return true;
}

int revoke(jitlock_thread &T, void *Obj, uint64_t H) {
  uint64_t Index = indexOf(H);
  jitlock_thread *Holder = threadOfIndex(Index);
  if (!Holder) {
    // Detached, with an empty lock stack: unheld, and nobody runs R1 with
    // its index again. A failed CAS (another revoker, a hash) starts over.
    if (headerOf(Obj).compare_exchange_strong(H, withoutField(H),
                                              std::memory_order_acq_rel))
      count(RevokedDetached);
    return JITLOCK_OK;
  }
  if (Holder == &T) {
    // The caller's own index with its tag ~0, or a thread the caller
    // stopped: nobody else runs R1 or R4 for it meanwhile.
    revokeFor(T, Obj, Index);
    return JITLOCK_OK;
  }
  if (inHandshake() && !holdsSafepoint())
    return misuse(JITLOCK_ESTATE, &T, Obj,
                  "monitor enter of an object reserved to another thread "
                  "from inside a handshake operation, which cannot revoke "
                  "the reservation");
  Revocation R{Obj, Index};
#ifdef JITLOCK_MUTATE_R3 // scripts/mutate.sh: no handshake, Holder runs on
  revokeInHandshake(&R, Holder);
#else
  // False: the thread detached meanwhile; the caller's next look sees it.
  handshakeWith(Holder, revokeInHandshake, &R);
#endif
  return JITLOCK_OK;
}

int revokeUnlessHeld(jitlock_thread &Owner, void *Obj) {
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if (!isReserved(H) ||
        (reservedTo(Owner, H) && LockStack(Owner).contains(Obj)))
      return JITLOCK_OK;
    if (int Status = revoke(Owner, Obj, H))
      return Status;
  }
}

void revokeOwn(jitlock_thread &T, void *Obj) {
  if (!enabled())
    return;
  auto Header = headerOf(Obj);
  for (;;) {
    uint64_t H = loadStableHeader(Obj);
    if (!reservedTo(T, H))
      return;
    // Release: a contender that inflates it next reads the critical
    // sections' writes through it.
    if (Header.compare_exchange_strong(
            H, withLockBits(withoutField(H), LockedValue),
            std::memory_order_release, std::memory_order_relaxed))
      return;
  }
}

void threadAttached(jitlock_thread &T) {
  uint64_t Tag = tagOf(T);
  if (Tag == ~uint64_t(0))
    return;
  std::lock_guard<std::mutex> Guard(IndexLock);
  Indices[indexOf(Tag)] = IndexEntry{&T, 0};
}

void threadDetached(jitlock_thread &T) {
  std::lock_guard<std::mutex> Guard(IndexLock);
  // Its tag may be ~0 already (the revoke limit): look for it by thread.
  for (auto It = Indices.begin(); It != Indices.end(); ++It)
    if (It->second.Thread == &T) {
      Indices.erase(It);
      return;
    }
}

jitlock_thread *holderOf(const void *Obj, uint64_t H, uint64_t *Holds) {
  jitlock_thread *Found = nullptr;
  *Holds = 0;
  detail::lockThreadRegistry();
  if (jitlock_thread *T = threadOfIndex(indexOf(H)))
    if (unsigned N = LockStack(*T).count(Obj)) {
      Found = T;
      *Holds = N;
    }
  detail::unlockThreadRegistry();
  return Found;
}

jitlock_reservation_stats revocationStats() {
  jitlock_reservation_stats S{};
  S.revocations_held = RevokedHeld.load(std::memory_order_relaxed);
  S.revocations_unheld = RevokedUnheld.load(std::memory_order_relaxed);
  S.revocations_detached = RevokedDetached.load(std::memory_order_relaxed);
  S.threads_stopped = ThreadsStopped.load(std::memory_order_relaxed);
  return S;
}

} // namespace jitlock::reservation
