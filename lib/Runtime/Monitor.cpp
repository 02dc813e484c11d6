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
//
// A singly linked list. An inflation registers its monitor with a CAS on the
// head and no lock. Only holders of the registry lock unlink (the sweep,
// which also runs under the operation lock, and discardMonitor) and walk
// it, so a registered monitor's link changes only under the lock. A push
// that races the unlinking of the head makes the unlinker's CAS fail; the
// unlinker then finds the monitor's new predecessor among those pushed
// since, whose links only it may change from then on. A walk under the lock
// sees the monitors registered when it loaded the head, as if each later
// push had waited for the lock.
//
// Free monitors. Each attached thread keeps its own list of free monitors
// (ThreadFreeList) and an inflation pops one with a CAS that only a thread
// emptying the list can make fail; no lock. An empty list is refilled, under
// the registry lock, with a whole batch of at most FreeBatchSize: one from
// the global free list, where deflation cycles put what their A6 handshake
// freed (an attached thread that ran the cycle keeps the last batch: it is
// likely to inflate next), else fresh monitors, carved from the index region
// or allocated on the heap. Sixteen amortizes the lock to one acquisition in
// sixteen inflations, at most fifteen idle monitors (under 3 KiB) per
// thread, and a refill that holds the lock for an O(1) splice (or sixteen
// constructions of fresh monitors). A thread gives its list back at detach.
// When the region is full, the allocating thread empties every thread's
// list onto the global list, under the lock that refills take, so that no
// monitor is free anywhere when it finds none. It then deflates for space
// (Deflation.cpp): it runs a deflation cycle, or waits for the cycle in
// flight to free what it swept, and tries again as long as monitors became
// free meanwhile (FreeEpoch). So an allocation fails only when a cycle that
// began after its failed try found every monitor in use and none became
// free since. Callers that are not attached take one monitor from the global
// list, or a fresh one, under the lock.

static std::mutex RegistryMutex;
static std::atomic<Monitor *> RegistryHead{nullptr};
/// Guarded by RegistryMutex.
static FreeBatches GlobalFree;
/// Thread lists that joined (ThreadFreeList::Listed); guarded by the lock.
static ThreadFreeList *ListedThreads = nullptr;
static std::atomic<uint64_t> LiveMonitors{0};
/// Monitors in memory: registered, deflated and waiting for their
/// handshake, or free.
static std::atomic<uint64_t> AllocatedMonitors{0};
static std::atomic<uint64_t> Refills{0}, LockedAllocations{0}, Steals{0};
/// One step further each time monitors become free (a deflation cycle's,
/// a discarded one, a reservation given back); written under the lock.
static std::atomic<uint64_t> FreeEpoch{0};
/// What the sweep of the deflation cycle in flight unregistered, until its
/// handshake (A6) lets it free them; guarded by the lock. Cycles outside a
/// safepoint run one at a time (Deflation.cpp), so they share it.
static DeflatedChain InFlight;

void detail::lockMonitorRegistry() { RegistryMutex.lock(); }
void detail::unlockMonitorRegistry() { RegistryMutex.unlock(); }
Monitor *detail::firstMonitor() {
  return RegistryHead.load(std::memory_order_acquire);
}

std::atomic<uint64_t> DeflationTrigger{UINT64_MAX};

static void count(std::atomic<uint64_t> &Counter) {
  Counter.fetch_add(1, std::memory_order_relaxed);
}

/// Monitors became free; lock held.
static void advanceFreeEpoch() {
  FreeEpoch.store(FreeEpoch.load(std::memory_order_relaxed) + 1,
                  std::memory_order_release);
}

void FreeBatches::add(Monitor *M) {
  if (First && FirstSize < FreeBatchSize) {
    M->RegistryNext.store(First, std::memory_order_relaxed);
    M->NextFreeBatch = First->NextFreeBatch;
    First->NextFreeBatch = nullptr;
    if (Last == First)
      Last = M;
    First = M;
    ++FirstSize;
    return;
  }
  M->RegistryNext.store(nullptr, std::memory_order_relaxed);
  addBatch(M);
  FirstSize = 1;
}

void FreeBatches::addBatch(Monitor *Chain) {
  Chain->NextFreeBatch = First;
  First = Chain;
  if (!Last)
    Last = Chain;
  // Its length is not known: add starts the next batch.
  FirstSize = FreeBatchSize;
}

void FreeBatches::splice(FreeBatches &Other) {
  if (!Other.First)
    return;
  Other.Last->NextFreeBatch = First;
  if (!Last)
    Last = Other.Last;
  First = Other.First;
  FirstSize = Other.FirstSize;
  Other = FreeBatches();
}

Monitor *FreeBatches::takeBatch() {
  Monitor *Batch = First;
  if (!Batch)
    return nullptr;
  First = Batch->NextFreeBatch;
  if (!First)
    Last = nullptr;
  Batch->NextFreeBatch = nullptr;
  FirstSize = FreeBatchSize;
  return Batch;
}

/// Pushes `M`, fully written, on the registry.
static void registerMonitor(Monitor *M) {
  Monitor *Head = RegistryHead.load(std::memory_order_relaxed);
  do
    M->RegistryNext.store(Head, std::memory_order_relaxed);
  while (!RegistryHead.compare_exchange_weak(Head, M, std::memory_order_release,
                                             std::memory_order_relaxed));
}

/// Unlinks the `N` consecutive monitors from `First` up to `After`
/// (exclusive), whose predecessor the caller last saw as `Prev` (null: the
/// head); lock held. One CAS or store for the whole run.
static void unlinkLocked(Monitor *First, Monitor *After, Monitor *Prev,
                         uint64_t N) {
  if (!Prev) {
    Monitor *Head = First;
    if (RegistryHead.compare_exchange_strong(Head, After,
                                             std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
      LiveMonitors.fetch_sub(N, std::memory_order_relaxed);
      return;
    }
    // Monitors pushed since sit in front of First; one of them links to it.
    for (Prev = Head;
         Prev->RegistryNext.load(std::memory_order_relaxed) != First;
         Prev = Prev->RegistryNext.load(std::memory_order_relaxed)) {
    }
  }
  Prev->RegistryNext.store(After, std::memory_order_relaxed);
  LiveMonitors.fetch_sub(N, std::memory_order_relaxed);
}

/// The calling thread's reservation (reserveMonitors), free monitors linked
/// through RegistryNext.
static thread_local Monitor *Reserved = nullptr;

/// Pops the first monitor of a list that only its owner, the caller, pops
/// and that others may only empty.
static Monitor *popOwn(std::atomic<Monitor *> &Head) {
  Monitor *M = Head.load(std::memory_order_acquire);
  // A thread emptying the list makes the CAS fail, and the owner alone
  // pushes: no ABA.
  while (M && !Head.compare_exchange_weak(
                  M, M->RegistryNext.load(std::memory_order_relaxed),
                  std::memory_order_acquire, std::memory_order_acquire)) {
  }
  return M;
}

/// `Want` fresh monitors as a chain: carved from the index region (fewer,
/// or null, once it is full), else from the heap; lock held.
static Monitor *allocateChainLocked(uint32_t Want) {
  uint32_t Count = Want;
  char *Region = nullptr;
  if (storage::isIndex()) {
    Region = static_cast<char *>(storage::carveFromRegion(Count));
    if (!Region)
      return nullptr;
  }
  Monitor *Chain = nullptr;
  for (uint32_t I = Count; I-- != 0;) {
    void *Memory = Region ? Region + size_t(I) * sizeof(Monitor)
                          : ::operator new(sizeof(Monitor),
                                           std::align_val_t(alignof(Monitor)));
    auto *M = new (Memory) Monitor(nullptr, 0, owner::DeflaterMarker, 0);
    M->RegistryNext.store(Chain, std::memory_order_relaxed);
    Chain = M;
  }
  AllocatedMonitors.fetch_add(Count, std::memory_order_relaxed);
  return Chain;
}

/// Moves every thread's free list to the global one; lock held.
static void stealLocked() {
  for (ThreadFreeList *L = ListedThreads; L; L = L->ListedNext)
    if (Monitor *Chain = L->Head.exchange(nullptr, std::memory_order_acq_rel)) {
      GlobalFree.addBatch(Chain);
      count(Steals);
    }
}

/// Makes `L` one of the lists a full region empties; lock held.
static void listLocked(ThreadFreeList &L) {
  if (L.Listed)
    return;
  L.Listed = true;
  L.ListedPrev = nullptr;
  L.ListedNext = ListedThreads;
  if (ListedThreads)
    ListedThreads->ListedPrev = &L;
  ListedThreads = &L;
}

/// Puts the chain `First`..`Last` in front of the calling thread's own
/// list, `L`; lock held (the owner pops only while it runs here).
static void pushOwnLocked(ThreadFreeList &L, Monitor *First, Monitor *Last) {
  listLocked(L);
  Last->RegistryNext.store(L.Head.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
  L.Head.store(First, std::memory_order_release);
}

/// A free batch from the global list, else fresh monitors (`Want` of them,
/// fewer once the index region is full), else, for a full region, the
/// other threads' free monitors; null when there is none. Lock held.
static Monitor *takeBatchLocked(uint32_t Want) {
  if (Monitor *Batch = GlobalFree.takeBatch())
    return Batch;
  if (Monitor *Fresh = allocateChainLocked(Want))
    return Fresh;
  stealLocked();
  return GlobalFree.takeBatch();
}

/// A free monitor, not registered: the calling thread's own, else one of a
/// batch that refills its list; null when index storage has none left
/// anywhere, with `EpochSeen` the FreeEpoch of that moment.
static Monitor *takeFree(uint64_t &EpochSeen) {
  jitlock_thread *T = currentThread();
  if (T)
    if (Monitor *M = popOwn(T->FreeMonitors.Head))
      return M;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  count(LockedAllocations);
  Monitor *M = takeBatchLocked(T ? FreeBatchSize : 1);
  if (!M) {
    EpochSeen = FreeEpoch.load(std::memory_order_relaxed);
    return nullptr;
  }
  if (Monitor *Rest = M->RegistryNext.load(std::memory_order_relaxed)) {
    if (T) {
      listLocked(T->FreeMonitors);
      T->FreeMonitors.Head.store(Rest, std::memory_order_release);
      count(Refills);
    } else {
      GlobalFree.addBatch(Rest);
    }
  }
  return M;
}

void Monitor::prepareFor(void *NewObject, uint64_t Displaced,
                         uintptr_t OwnerWord, uint64_t Holds) {
  // Its queues are empty: only idle or never-published monitors are freed.
  // Odd generation while the identity changes: a reader that no handshake
  // covers (Synchronizer.cpp) sees the change.
  uint64_t Gen = Generation.load(std::memory_order_relaxed);
  Generation.store(Gen + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  setObject(NewObject);
  DisplacedHeader.store(Displaced, std::memory_order_relaxed);
  Recursions.store(Holds, std::memory_order_relaxed);
  Contentions.store(0, std::memory_order_relaxed);
  Owner.store(OwnerWord, std::memory_order_relaxed);
  Generation.store(Gen + 2, std::memory_order_release);
}

Monitor *newMonitor(void *Object, uint64_t DisplacedHeader, uintptr_t OwnerWord,
                    uint64_t Recursions) {
  Monitor *M;
  for (;;) {
    if ((M = Reserved)) {
      Reserved = M->RegistryNext.load(std::memory_order_relaxed);
      break;
    }
    uint64_t Epoch;
    if ((M = takeFree(Epoch)))
      break;
    // The index region is full: deflate for space, and try again while
    // that (or anything else) freed monitors.
    if (!deflateForSpace(Epoch))
      return nullptr;
  }
  M->prepareFor(Object, DisplacedHeader, OwnerWord, Recursions);
  // Counted before it is pushed, so that an unlink never counts it first.
  // Sequentially consistent, as the deflation thread's store of the trigger
  // and its load of the count: one of the two sees the other.
  uint64_t Live = LiveMonitors.fetch_add(1) + 1;
  registerMonitor(M);
  if (Live >= DeflationTrigger.load())
    requestDeflation();
  return M;
}

/// Puts the calling thread's reservation back on the global list.
static void releaseReservationLocked() {
  if (Monitor *Chain = Reserved) {
    GlobalFree.addBatch(Chain);
    advanceFreeEpoch();
  }
  Reserved = nullptr;
}

bool reserveMonitors(size_t N) {
  if (!storage::isIndex())
    return true;
  for (;;) {
    size_t Taken = 0;
    uint64_t Epoch = 0;
    for (; Taken != N; ++Taken) {
      Monitor *M = takeFree(Epoch);
      if (!M)
        break;
      M->RegistryNext.store(Reserved, std::memory_order_relaxed);
      Reserved = M;
    }
    if (Taken == N)
      return true;
    {
      std::lock_guard<std::mutex> Guard(RegistryMutex);
      count(LockedAllocations);
      // What this call gives back is no progress for it; what others freed
      // since its failed try is.
      bool OthersFreed = FreeEpoch.load(std::memory_order_relaxed) != Epoch;
      releaseReservationLocked();
      if (!OthersFreed)
        Epoch = FreeEpoch.load(std::memory_order_relaxed);
    }
    if (!deflateForSpace(Epoch))
      return false;
  }
}

void releaseReservation() {
  if (!Reserved)
    return;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  count(LockedAllocations);
  releaseReservationLocked();
}

void discardMonitor(Monitor *M) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  count(LockedAllocations);
  // Pushed by this thread just now: near the head.
  Monitor *Prev = nullptr;
  for (Monitor *It = RegistryHead.load(std::memory_order_acquire); It != M;
       It = It->RegistryNext.load(std::memory_order_relaxed))
    Prev = It;
  unlinkLocked(M, M->RegistryNext.load(std::memory_order_relaxed), Prev, 1);
  // A reader holding a stale pointer sees the marker and starts over.
  M->markDiscarded();
  // Never published: reusable at once, by this thread if it is attached.
  advanceFreeEpoch();
  if (jitlock_thread *T = currentThread()) {
    pushOwnLocked(T->FreeMonitors, M, M);
    return;
  }
  GlobalFree.add(M);
}

void releaseFreeMonitors(jitlock_thread &T) {
  ThreadFreeList &L = T.FreeMonitors;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  if (Monitor *Chain = L.Head.exchange(nullptr, std::memory_order_acq_rel)) {
    GlobalFree.addBatch(Chain);
  }
  if (!L.Listed)
    return;
  (L.ListedPrev ? L.ListedPrev->ListedNext : ListedThreads) = L.ListedNext;
  if (L.ListedNext)
    L.ListedNext->ListedPrev = L.ListedPrev;
  L.ListedNext = L.ListedPrev = nullptr;
  L.Listed = false;
}

/// sweepMonitors; lock held.
static size_t sweepLocked(bool (*Deflate)(Monitor &), DeflatedChain &Deflated,
                          uint64_t &Kept) {
  size_t Count = 0;
  // Deflated monitors are unlinked a run of consecutive ones at a time:
  // `Run` of them from `RunFirst`, after the kept monitor `Prev`.
  Monitor *Prev = nullptr, *RunFirst = nullptr;
  uint64_t Run = 0;
  for (Monitor *M = RegistryHead.load(std::memory_order_acquire), *Next; M;
       M = Next) {
    Next = M->RegistryNext.load(std::memory_order_relaxed);
    if (Deflate(*M)) {
      if (!Run++)
        RunFirst = M;
      // Its link changes; the run's end is known already.
      Deflated.add(M);
      ++Count;
      continue;
    }
    if (Run)
      unlinkLocked(RunFirst, M, Prev, Run);
    Run = 0;
    Prev = M;
  }
  if (Run)
    unlinkLocked(RunFirst, nullptr, Prev, Run);
  Kept = LiveMonitors.load(std::memory_order_relaxed);
  return Count;
}

size_t sweepMonitors(bool (*Deflate)(Monitor &), DeflatedChain &Deflated,
                     uint64_t &Kept) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  return sweepLocked(Deflate, Deflated, Kept);
}

size_t sweepMonitorsInFlight(bool (*Deflate)(Monitor &), uint64_t &Kept) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  return sweepLocked(Deflate, InFlight, Kept);
}

/// freeMonitors; lock held.
static void freeLocked(DeflatedChain &Deflated) {
  if (Deflated.empty())
    return;
  // An attached thread that ran the cycle (for space, or its own call)
  // keeps the batch it freed last: it is likely to inflate next, and a
  // monitor just deflated is reused first.
  if (jitlock_thread *T = currentThread()) {
    Monitor *First = Deflated.takeBatch(), *Last = First;
    while (Monitor *Next = Last->RegistryNext.load(std::memory_order_relaxed))
      Last = Next;
    pushOwnLocked(T->FreeMonitors, First, Last);
  }
  GlobalFree.splice(Deflated);
  advanceFreeEpoch();
}

void freeMonitors(DeflatedChain &Deflated) {
  if (Deflated.empty())
    return;
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  freeLocked(Deflated);
}

bool monitorsInFlight() {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  return !InFlight.empty();
}

void freeMonitorsInFlight() {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  freeLocked(InFlight);
}

uint64_t freeEpoch() { return FreeEpoch.load(std::memory_order_acquire); }

uint64_t monitorsAlive() { return LiveMonitors.load(); }

uint64_t monitorsAllocated() {
  return AllocatedMonitors.load(std::memory_order_relaxed);
}

FreeListFigures freeListFigures() {
  FreeListFigures F;
  F.Refills = Refills.load(std::memory_order_relaxed);
  F.LockedAllocations = LockedAllocations.load(std::memory_order_relaxed);
  F.Steals = Steals.load(std::memory_order_relaxed);
  return F;
}

/// Returns a monitor's memory, wherever it came from; registry lock held.
static void destroyMonitor(Monitor *M) {
  bool InRegion = storage::inRegion(M);
  M->~Monitor();
  if (!InRegion)
    ::operator delete(M, std::align_val_t(alignof(Monitor)));
  AllocatedMonitors.fetch_sub(1, std::memory_order_relaxed);
}

/// Destroys a chain linked through RegistryNext; registry lock held.
static void destroyChain(Monitor *M) {
  while (M) {
    Monitor *Next = M->RegistryNext.load(std::memory_order_relaxed);
    destroyMonitor(M);
    M = Next;
  }
}

void freeAllMonitors(bool WriteBack) {
  std::lock_guard<std::mutex> Guard(RegistryMutex);
  while (Monitor *M = RegistryHead.load(std::memory_order_acquire)) {
    RegistryHead.store(M->RegistryNext.load(std::memory_order_relaxed),
                       std::memory_order_relaxed);
    // Give the object back its unlocked header, hash included, once any
    // transient embedder state (11) has passed.
    if (WriteBack)
      storage::unpublish(
          *M, M->Object,
          header::withLockBits(M->displacedHeader(), header::UnlockedValue));
    destroyMonitor(M);
    LiveMonitors.fetch_sub(1, std::memory_order_relaxed);
  }
  // No thread is attached: every thread list was given back at detach, and
  // no cycle is in flight.
  GlobalFree.splice(InFlight);
  stealLocked();
  while (Monitor *Batch = GlobalFree.takeBatch())
    destroyChain(Batch);
  storage::clearTable();
  storage::resetRegion();
}

} // namespace jitlock

void jitlock::Monitor::validate(const jitlock_thread &Self) const {
  uintptr_t Word = Owner.load(std::memory_order_relaxed);
  JITLOCK_ASSERT(Word == 0 || Word == owner::AnonymousOwner ||
                     Word == owner::DeflaterMarker || Word % CacheLine == 0,
                 "M1", "owner word is neither 0, a marker nor a thread");
  if (Word != owner::encode(&Self))
    return;
  [[maybe_unused]] void *Obj = object();
  JITLOCK_ASSERT(Obj, "M1", "an owned monitor names no object");
  JITLOCK_ASSERT(!LockStack(const_cast<jitlock_thread &>(Self)).contains(Obj),
                 "E3", "an owned monitor's object is also on the lock stack");
  JITLOCK_ASSERT(Contentions.load(std::memory_order_relaxed) >= 0, "A3",
                 "a deflation won a monitor its owner still holds");
}
