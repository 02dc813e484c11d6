//===- Monitor.cpp - Monitor queues and the monitor registry --------------===//
#include "Monitor.h"

#include "MonitorStorage.h"
#include "ObjectHeader.h"
#include "Parker.h"
#include "Synchronizer.h"

#include <mutex>
#include <sched.h>

namespace jitlock {

void SpinLock::lock() {
  for (unsigned Spins = 0;; ++Spins) {
    if (Word.load(std::memory_order_relaxed) == 0 &&
        Word.exchange(1, std::memory_order_acquire) == 0)
      return;
    // Holders never block while holding it, so yielding is enough.
    if (Spins < 64)
      spinPause();
    else
      sched_yield();
  }
}

void Monitor::append(QueueNode::Where Q, QueueNode &N) {
  QueueNode *&Head = Q == QueueNode::EntryQueue ? EntryHead : WaitHead;
  QueueNode *&Tail = Q == QueueNode::EntryQueue ? EntryTail : WaitTail;
  N.Queue.store(Q, std::memory_order_relaxed);
  N.Next = nullptr;
  N.Prev = Tail;
  if (Tail)
    Tail->Next = &N;
  else
    Head = &N;
  Tail = &N;
  auto &Count = Q == QueueNode::EntryQueue ? EntryCount : WaitCount;
  Count.store(Count.load(std::memory_order_relaxed) + 1,
              std::memory_order_relaxed);
}

void Monitor::unlink(QueueNode &N) {
  bool Entry = N.Queue.load(std::memory_order_relaxed) == QueueNode::EntryQueue;
  QueueNode *&Head = Entry ? EntryHead : WaitHead;
  QueueNode *&Tail = Entry ? EntryTail : WaitTail;
  (N.Prev ? N.Prev->Next : Head) = N.Next;
  (N.Next ? N.Next->Prev : Tail) = N.Prev;
  N.Next = N.Prev = nullptr;
  N.Queue.store(QueueNode::None, std::memory_order_relaxed);
  auto &Count = Entry ? EntryCount : WaitCount;
  Count.store(Count.load(std::memory_order_relaxed) - 1,
              std::memory_order_relaxed);
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

static std::mutex RegistryMutex;
static Monitor *RegistryHead = nullptr;
/// Freed monitors, linked through RegistryNext; guarded by RegistryMutex.
static Monitor *FreeHead = nullptr;
static std::atomic<uint64_t> LiveMonitors{0};
/// Monitors in memory: registered, deflated and waiting for their
/// handshake, or free.
static std::atomic<uint64_t> AllocatedMonitors{0};

void detail::lockMonitorRegistry() { RegistryMutex.lock(); }
void detail::unlockMonitorRegistry() { RegistryMutex.unlock(); }
Monitor *detail::firstMonitor() { return RegistryHead; }

std::atomic<uint64_t> DeflationTrigger{UINT64_MAX};

/// Unlinks `M` from the registry; lock held.
static void unlinkLocked(Monitor *M) {
  (M->RegistryPrev ? M->RegistryPrev->RegistryNext : RegistryHead) =
      M->RegistryNext;
  if (M->RegistryNext)
    M->RegistryNext->RegistryPrev = M->RegistryPrev;
  M->RegistryPrev = M->RegistryNext = nullptr;
  LiveMonitors.fetch_sub(1, std::memory_order_relaxed);
}

/// Puts the unregistered chain `Head`..`Tail` (linked through RegistryNext)
/// on the free list; lock held. Their owner words are the deflater's marker.
static void pushFreeLocked(Monitor *Head, Monitor *Tail) {
  Tail->RegistryNext = FreeHead;
  FreeHead = Head;
}

/// A monitor from the free list, or fresh memory (the heap; for index
/// storage the region, null once it is full); registry lock held.
/// The calling thread's reservation (reserveMonitors), free monitors linked
/// through RegistryNext.
static thread_local Monitor *Reserved = nullptr;

static Monitor *allocateLocked(void *Object, uint64_t DisplacedHeader,
                               uintptr_t OwnerWord, uint64_t Recursions) {
  Monitor *&From = Reserved ? Reserved : FreeHead;
  if (Monitor *M = From) {
    // Its queues are empty: only idle or never-published monitors are
    // freed. Odd generation while the identity changes: a reader that no
    // handshake covers (Synchronizer.cpp) sees the change.
    From = M->RegistryNext;
    uint64_t Gen = M->Generation.load(std::memory_order_relaxed);
    M->Generation.store(Gen + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    M->setObject(Object);
    M->DisplacedHeader.store(DisplacedHeader, std::memory_order_relaxed);
    M->Recursions.store(Recursions, std::memory_order_relaxed);
    M->Contentions.store(0, std::memory_order_relaxed);
    M->Owner.store(OwnerWord, std::memory_order_relaxed);
    M->Generation.store(Gen + 2, std::memory_order_release);
    return M;
  }
  void *Memory =
      storage::isIndex()
          ? storage::carveFromRegion()
          : ::operator new(sizeof(Monitor), std::align_val_t(alignof(Monitor)));
  if (!Memory)
    return nullptr;
  AllocatedMonitors.fetch_add(1, std::memory_order_relaxed);
  return new (Memory) Monitor(Object, DisplacedHeader, OwnerWord, Recursions);
}

Monitor *newMonitor(void *Object, uint64_t DisplacedHeader, uintptr_t OwnerWord,
                    uint64_t Recursions) {
  Monitor *M = nullptr;
  uint64_t Live;
  for (bool Deflated = false;; Deflated = true) {
    {
      std::lock_guard<std::mutex> Guard(RegistryMutex);
      M = allocateLocked(Object, DisplacedHeader, OwnerWord, Recursions);
      if (M) {
        M->RegistryPrev = nullptr;
        M->RegistryNext = RegistryHead;
        if (RegistryHead)
          RegistryHead->RegistryPrev = M;
        RegistryHead = M;
        // Sequentially consistent, as the deflation thread's store of the
        // trigger and its load of the count: one of the two sees the other.
        Live = LiveMonitors.fetch_add(1) + 1;
        break;
      }
    }
    // The index region is full: deflate idle monitors once, where the
    // caller may run a deflation cycle, and try again.
    if (Deflated || !deflateForSpace())
      return nullptr;
  }
  if (Live >= DeflationTrigger.load())
    requestDeflation();
  return M;
}

bool reserveMonitors(size_t N) {
  if (!storage::isIndex())
    return true;
  for (bool Deflated = false;; Deflated = true) {
    {
      std::lock_guard<std::mutex> Guard(RegistryMutex);
      size_t Taken = 0;
      for (; Taken != N; ++Taken) {
        Monitor *M = FreeHead;
        if (M) {
          FreeHead = M->RegistryNext;
        } else if (void *Memory = storage::carveFromRegion()) {
          AllocatedMonitors.fetch_add(1, std::memory_order_relaxed);
          M = new (Memory) Monitor(nullptr, 0, owner::DeflaterMarker, 0);
        } else {
          break;
        }
        M->RegistryNext = Reserved;
        Reserved = M;
      }
      if (Taken == N)
        return true;
      while (Monitor *M = Reserved) {
        Reserved = M->RegistryNext;
        pushFreeLocked(M, M);
      }
    }
    if (Deflated || !deflateForSpace())
      return false;
  }
}

void releaseReservation() {
  if (!Reserved)
    return;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  while (Monitor *M = Reserved) {
    Reserved = M->RegistryNext;
    pushFreeLocked(M, M);
  }
}

void discardMonitor(Monitor *M) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  unlinkLocked(M);
  // A reader holding a stale pointer sees the marker and starts over.
  M->Owner.store(owner::DeflaterMarker, std::memory_order_relaxed);
  pushFreeLocked(M, M);
}

size_t sweepMonitors(bool (*Deflate)(Monitor &), DeflatedChain &Deflated,
                     uint64_t &Kept) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  size_t Count = 0;
  for (Monitor *M = RegistryHead, *Next; M; M = Next) {
    Next = M->RegistryNext;
    if (Deflate(*M)) {
      unlinkLocked(M);
      M->RegistryNext = Deflated.Head;
      Deflated.Head = M;
      if (!Deflated.Tail)
        Deflated.Tail = M;
      ++Count;
    }
  }
  Kept = LiveMonitors.load(std::memory_order_relaxed);
  return Count;
}

void freeMonitors(const DeflatedChain &Deflated) {
  if (!Deflated.Head)
    return;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  pushFreeLocked(Deflated.Head, Deflated.Tail);
}

uint64_t monitorsAlive() { return LiveMonitors.load(); }

uint64_t monitorsAllocated() {
  return AllocatedMonitors.load(std::memory_order_relaxed);
}

/// Returns a monitor's memory, wherever it came from; registry lock held.
static void destroyMonitor(Monitor *M) {
  bool InRegion = storage::inRegion(M);
  M->~Monitor();
  if (!InRegion)
    ::operator delete(M, std::align_val_t(alignof(Monitor)));
  AllocatedMonitors.fetch_sub(1, std::memory_order_relaxed);
}

void freeAllMonitors() {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  while (Monitor *M = RegistryHead) {
    RegistryHead = M->RegistryNext;
    // Give the object back its unlocked header, hash included, once any
    // transient embedder state (11) has passed.
    storage::unpublish(
        *M, M->Object,
        header::withLockBits(M->DisplacedHeader.load(std::memory_order_relaxed),
                             header::UnlockedValue));
    destroyMonitor(M);
    LiveMonitors.fetch_sub(1, std::memory_order_relaxed);
  }
  while (Monitor *M = FreeHead) {
    FreeHead = M->RegistryNext;
    destroyMonitor(M);
  }
  storage::clearTable();
  storage::resetRegion();
}

} // namespace jitlock
