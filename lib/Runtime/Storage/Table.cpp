//===- Storage/Table.cpp - Table monitor storage: side table and cache ----===//
//
// The table storage of MonitorStorage.h (its protocol is stated there).
//
// The table is an open-addressing, linear-probe array of {object, monitor}
// slots whose size is a power of two, probed from the identity hash: the
// shape a compiled probe could search too, and one cache line holds four
// slots. Deleted slots become tombstones (lookups probe past them; inserts
// reuse them), since a backward shift would move entries under lock-free
// readers. When live entries and tombstones pass three quarters of the
// slots, the table is rehashed into a new array (twice the size if the
// live entries alone pass a quarter), published with one release store.
//
//===----------------------------------------------------------------------===//
#include "Strategies.h"

#include "../Monitor.h"
#include "../Parker.h"
#include "../Safepoint.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <sched.h>

namespace jitlock {
namespace storage {

namespace {
/// Marks a deleted slot: not an object (objects are 8-aligned), not empty.
const void *const Tombstone = reinterpret_cast<const void *>(1);

struct Slot {
  std::atomic<const void *> Key{nullptr};
  std::atomic<Monitor *> Mon{nullptr};
};

struct TableArray {
  size_t Mask;
  TableArray *NextRetired = nullptr;
  Slot *Slots;
};

constexpr size_t InitialSlots = 64;

std::mutex TableMutex;
/// The array lookups read; replaced (release) by a rehash.
std::atomic<TableArray *> Current{nullptr};
/// Guarded by TableMutex.
size_t Live = 0, Tombstones = 0;
TableArray *Retired = nullptr;
std::atomic<uint64_t> Rehashes{0}, LongestProbe{0}, Lookups{0};

TableArray *newArray(size_t NumSlots) {
  auto *A = new TableArray;
  A->Mask = NumSlots - 1;
  A->Slots = new Slot[NumSlots];
  return A;
}

void deleteArray(TableArray *A) {
  delete[] A->Slots;
  delete A;
}

/// Where the probe for `Hash` starts. The hash is random already; the
/// multiplication spreads a small hash field over every bit.
size_t homeOf(uint64_t Hash, size_t Mask) {
  return size_t((Hash * 0x9e3779b97f4a7c15u) >> 32) & Mask;
}

uint64_t keyHash(const Monitor &M) {
  // The header the monitor was made from: its hash, which the table keys.
  return header::hashOf(M.displacedHeader());
}

void noteProbe(size_t Length) {
  uint64_t Seen = LongestProbe.load(std::memory_order_relaxed);
  while (Length > Seen && !LongestProbe.compare_exchange_weak(
                              Seen, Length, std::memory_order_relaxed)) {
  }
}

/// The slot of `Obj` in `A`, or null. Lock-free.
Monitor *find(const TableArray &A, const void *Obj, uint64_t Hash) {
  for (size_t I = homeOf(Hash, A.Mask), N = 0; N <= A.Mask;
       I = (I + 1) & A.Mask, ++N) {
    const void *Key = A.Slots[I].Key.load(std::memory_order_acquire);
    if (Key == Obj) {
      noteProbe(N + 1);
      return A.Slots[I].Mon.load(std::memory_order_acquire);
    }
    if (!Key)
      return nullptr;
  }
  return nullptr;
}

/// Puts `Obj` -> `M` in `A`, which has a free or deleted slot; table lock
/// held. Readers that find the key see the monitor: it is stored first.
void insertInto(TableArray &A, const void *Obj, Monitor *M, uint64_t Hash) {
  for (size_t I = homeOf(Hash, A.Mask);; I = (I + 1) & A.Mask) {
    const void *Key = A.Slots[I].Key.load(std::memory_order_relaxed);
    if (!Key || Key == Tombstone) {
      if (Key == Tombstone)
        --Tombstones;
      // Release on both: a reader that found the key before the slot was
      // deleted and reused for the same object may load the new monitor.
      A.Slots[I].Mon.store(M, std::memory_order_release);
      A.Slots[I].Key.store(Obj, std::memory_order_release);
      return;
    }
  }
}

/// Rehashes into a fresh array when an insert would fill more than three
/// quarters of the slots; table lock held.
void growIfNeeded() {
  TableArray *A = Current.load(std::memory_order_relaxed);
  if (!A) {
    Current.store(newArray(InitialSlots), std::memory_order_release);
    return;
  }
  size_t Slots = A->Mask + 1;
  if ((Live + Tombstones + 1) * 4 <= Slots * 3)
    return;
  size_t NewSlots = Slots;
  while ((Live + 1) * 4 > NewSlots)
    NewSlots *= 2;
  TableArray *B = newArray(NewSlots);
  for (size_t I = 0; I != Slots; ++I) {
    const void *Key = A->Slots[I].Key.load(std::memory_order_relaxed);
    if (Key && Key != Tombstone) {
      Monitor *M = A->Slots[I].Mon.load(std::memory_order_relaxed);
      insertInto(*B, Key, M, keyHash(*M));
    }
  }
  Tombstones = 0;
  Current.store(B, std::memory_order_release);
  // Readers may still be probing A: it is freed after a handshake.
  A->NextRetired = Retired;
  Retired = A;
  Rehashes.fetch_add(1, std::memory_order_relaxed);
}

/// Removes `Obj`'s entry if it names `M`; table lock held.
bool removeIfNames(const void *Obj, const Monitor &M) {
  TableArray *A = Current.load(std::memory_order_relaxed);
  if (!A)
    return false;
  uint64_t Hash = keyHash(M);
  for (size_t I = homeOf(Hash, A->Mask), N = 0; N <= A->Mask;
       I = (I + 1) & A->Mask, ++N) {
    const void *Key = A->Slots[I].Key.load(std::memory_order_relaxed);
    if (Key == Obj) {
      if (A->Slots[I].Mon.load(std::memory_order_relaxed) != &M)
        return false;
      A->Slots[I].Key.store(Tombstone, std::memory_order_release);
      --Live;
      ++Tombstones;
      return true;
    }
    if (!Key)
      return false;
  }
  return false;
}

/// Whether the calling thread is one that handshakes cover: attached and
/// running (`managed` or `runtime`), so that no retired array is freed, and
/// no monitor it found reused, before it polls.
jitlock_thread *coveredCaller() {
  jitlock_thread *T = currentThread();
  if (!T)
    return nullptr;
  uint32_t State = T->State.load(std::memory_order_relaxed);
  return State == JITLOCK_THREAD_MANAGED || State == JITLOCK_THREAD_RUNTIME
             ? T
             : nullptr;
}

/// Moves `Obj` -> `M` to the front of `T`'s cache (most recently used
/// first), dropping the least recently used entry.
void fillCache(jitlock_thread &T, const void *Obj, Monitor *M) {
  MonitorCacheEntry *C = T.MonitorCache;
  unsigned From = MonitorCacheEntries - 1;
  for (unsigned I = 0; I != MonitorCacheEntries; ++I)
    if (C[I].Object.load(std::memory_order_relaxed) == Obj) {
      From = I;
      break;
    }
  for (unsigned I = From; I != 0; --I) {
    C[I].Mon.store(C[I - 1].Mon.load(std::memory_order_relaxed),
                   std::memory_order_relaxed);
    C[I].Object.store(C[I - 1].Object.load(std::memory_order_relaxed),
                      std::memory_order_relaxed);
  }
  C[0].Mon.store(M, std::memory_order_relaxed);
  C[0].Object.store(const_cast<void *>(Obj), std::memory_order_relaxed);
}

/// A cache hit the runtime can trust: a monitor of `Obj` that no deflation
/// has won. A cache may hold a deflated one until the A6 handshake.
Monitor *fromCache(jitlock_thread &T, const void *Obj) {
  for (MonitorCacheEntry &E : T.MonitorCache) {
    if (E.Object.load(std::memory_order_relaxed) != Obj)
      continue;
    Monitor *M = E.Mon.load(std::memory_order_relaxed);
    if (M->object() == Obj && !M->deflationWon())
      return M;
    return nullptr;
  }
  return nullptr;
}

/// The table lookup for `Obj`, validated: the slot's key and monitor are
/// read apart, so the monitor must be `Obj`'s.
Monitor *lookup(const void *Obj, uint64_t Hash) {
  Lookups.fetch_add(1, std::memory_order_relaxed);
  TableArray *A = Current.load(std::memory_order_acquire);
  if (!A)
    return nullptr;
  Monitor *M = find(*A, Obj, Hash);
  return M && M->object() == Obj ? M : nullptr;
}
} // namespace

void dropCache(jitlock_thread &T) {
  for (MonitorCacheEntry &E : T.MonitorCache) {
    E.Object.store(nullptr, std::memory_order_relaxed);
    E.Mon.store(nullptr, std::memory_order_relaxed);
  }
}

void *takeRetiredArrays() {
  std::lock_guard<std::mutex> Guard(TableMutex);
  TableArray *A = Retired;
  Retired = nullptr;
  return A;
}

void freeRetiredArrays(void *Arrays) {
  for (auto *A = static_cast<TableArray *>(Arrays); A;) {
    TableArray *Next = A->NextRetired;
    deleteArray(A);
    A = Next;
  }
}

void followMovedObjects() {
  {
    std::lock_guard<std::mutex> Guard(TableMutex);
    if (TableArray *A = Current.load(std::memory_order_relaxed)) {
      for (size_t I = 0; I <= A->Mask; ++I) {
        const void *Key = A->Slots[I].Key.load(std::memory_order_relaxed);
        if (Key && Key != Tombstone)
          A->Slots[I].Key.store(
              A->Slots[I].Mon.load(std::memory_order_relaxed)->Object,
              std::memory_order_relaxed);
      }
    }
  }
  // Every thread is stopped: no reader holds an old array or cache entry.
  freeRetiredArrays(takeRetiredArrays());
  forEachThread([](jitlock_thread &T) { dropCache(T); });
}

void clearTable() {
  std::lock_guard<std::mutex> Guard(TableMutex);
  if (TableArray *A = Current.exchange(nullptr))
    deleteArray(A);
  TableArray *R = Retired;
  Retired = nullptr;
  freeRetiredArrays(R);
  Live = Tombstones = 0;
}

TableFigures tableFigures() {
  TableFigures F;
  {
    std::lock_guard<std::mutex> Guard(TableMutex);
    if (TableArray *A = Current.load(std::memory_order_relaxed))
      F.Capacity = A->Mask + 1;
    F.Live = Live;
    F.Tombstones = Tombstones;
  }
  F.Rehashes = Rehashes.load(std::memory_order_relaxed);
  F.LongestProbe = LongestProbe.load(std::memory_order_relaxed);
  F.Lookups = Lookups.load(std::memory_order_relaxed);
  return F;
}

namespace table {
uint64_t encode(uint64_t H) {
  return header::withLockBits(H, header::MonitorValue);
}

Monitor *monitorFor(const void *Obj, uint64_t H) {
  jitlock_thread *T = coveredCaller();
  if (!T) {
    std::lock_guard<std::mutex> Guard(TableMutex);
    return lookup(Obj, header::hashOf(H));
  }
  if (Monitor *M = fromCache(*T, Obj)) {
    bump(T->Stats.CacheHits);
    return M;
  }
  bump(T->Stats.CacheMisses);
  Monitor *M = lookup(Obj, header::hashOf(H));
  if (M)
    fillCache(*T, Obj, M);
  return M;
}

void publish(void *Obj, Monitor *M) {
  {
    std::lock_guard<std::mutex> Guard(TableMutex);
    growIfNeeded();
    insertInto(*Current.load(std::memory_order_relaxed), Obj, M, keyHash(*M));
    ++Live;
  }
  // The inflater is about to use it, and so is its inline code.
  if (jitlock_thread *T = coveredCaller())
    fillCache(*T, Obj, M);
}

void unpublish(Monitor &M, void *Obj) {
  auto Header = headerOf(Obj);
  // The entry first, then the header, under the lock: a helper that comes
  // later finds no entry for M and leaves alone a header that may already
  // name the object's next monitor.
  std::lock_guard<std::mutex> Guard(TableMutex);
  if (!removeIfNames(Obj, M))
    return;
  for (uint64_t H = Header.load(std::memory_order_relaxed);;) {
    if (header::isEmbedderOwned(H)) {
      sched_yield();
      H = Header.load(std::memory_order_relaxed);
      continue;
    }
    if (Header.compare_exchange_weak(
            H, header::withLockBits(H, header::UnlockedValue),
            std::memory_order_release, std::memory_order_relaxed))
      return;
  }
}
} // namespace table

} // namespace storage
} // namespace jitlock
