//===- Monitor.h - The inflated monitor -------------------------*- C++ -*-===//
//
// A monitor replaces the fast lock when an object is contended, re-entered
// non-adjacently, waited on, or pushed off a full lock stack. Its cache lines
// are grouped by writer:
//
//   line 0  identity: the object, the displaced header (hash installs CAS
//           it), the generation, registry links
//   line 1  the owner word, the recursion count and the entry count: the
//           first two written by the owner and the owner word CASed by
//           enterers; the entry count written by threads that join or leave
//           the entry queue. The inline exit reads all three together.
//   line 2  the queue lock, the entry queue, the wait set and the contention
//           count: written by contending enterers in the runtime (and by
//           deflaters), never by inline code
//
// The owner word holds the owning thread's address, 0, AnonymousOwner or
// DeflaterMarker, and nothing else: an exit releases it with a plain
// store. Whether anyone is queued is the entry count, a word of its own
// that such a store cannot erase; the exit loads it after the store, and a
// thread about to park orders its increment against that load with a
// process-wide barrier (Synchronizer.cpp, N3 and J1-J3).
//
// Monitors are type-stable: a deflated or discarded monitor goes to a free
// list (its owner word DeflaterMarker, so that a stale reader retries) and
// is reused by the next inflation; memory is returned only at shutdown. A
// deflated monitor reaches the free list only after a handshake with every
// thread (A6 in Synchronizer.cpp); until then it sits in the chain of the
// cycle in flight, out of the registry. Free monitors sit in batches on the
// global free list and in each attached thread's own list, from which its
// inflations take them without a lock (Monitor.cpp, "Free monitors").
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_MONITOR_H
#define JITLOCK_RUNTIME_MONITOR_H

#include "AdaptiveSpin.h"
#include "Thread.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace jitlock {

namespace owner {
/// Owned by some thread that holds the object fast-locked; set by a
/// contender that inflated it and cannot know which thread that is.
inline constexpr uintptr_t AnonymousOwner = 0b10;
/// Set by a deflater (A1 in Synchronizer.cpp) and kept while the monitor is
/// free. Not a thread address (threads are cache-line aligned) and nonzero,
/// so inline paths, which only CAS 0 -> self, send it to the runtime, which
/// cancels the deflation or retries from the header (A4).
inline constexpr uintptr_t DeflaterMarker = 0b100;

inline uintptr_t encode(const jitlock_thread *T) {
  return reinterpret_cast<uintptr_t>(T);
}
/// The owning thread, or null for 0 and the two markers.
inline jitlock_thread *threadOf(uintptr_t Word) {
  if (Word == AnonymousOwner || Word == DeflaterMarker)
    return nullptr;
  return reinterpret_cast<jitlock_thread *>(Word);
}
} // namespace owner

/// A test-and-test-and-set lock for the short queue critical sections.
class SpinLock {
public:
  void lock();
  void unlock() { Word.store(0, std::memory_order_release); }

private:
  std::atomic<uint32_t> Word{0};
};

class alignas(CacheLine) Monitor {
public:
  Monitor(void *Object, uint64_t DisplacedHeader, uintptr_t OwnerWord,
          uint64_t Recursions)
      : Object(Object), DisplacedHeader(DisplacedHeader), Owner(OwnerWord),
        Recursions(Recursions) {}

  /// What a deflation that has won (A3) leaves in Contentions; enterers
  /// that count themselves later still read a negative number.
  static constexpr int32_t DeflatedContentions = INT32_MIN;

  /// The object, read while another thread may reuse the monitor for the
  /// next one (table lookups validate what they found with it).
  void *object() const {
    return std::atomic_ref<void *>(const_cast<void *&>(Object))
        .load(std::memory_order_relaxed);
  }
  void setObject(void *Obj) {
    std::atomic_ref<void *>(Object).store(Obj, std::memory_order_relaxed);
  }

  /// Whether a deflater holds it (A1-A3), it was deflated, or it is free:
  /// not a monitor to take from 0.
  bool isDeflating() const {
    return Owner.load(std::memory_order_relaxed) == owner::DeflaterMarker;
  }

  /// Checks what holds at rest for the calling thread `Self`: the owner word
  /// is 0, a marker or a thread; a monitor `Self` owns names an object that
  /// `Self`'s lock stack does not also hold (the monitor counts the holds),
  /// and no deflation has won it (A3). Only with assertions on.
  void validate(const jitlock_thread &Self) const;

  /// Whether `T` owns it. Exact for the caller's own thread; for another
  /// thread, a snapshot.
  bool isOwnedBy(const jitlock_thread &T) const {
    return ownerAcquire() == owner::encode(&T);
  }

  // The words several threads write (the displaced header and the
  // generation of line 0, line 1, the counts and the spin budget of line 2)
  // are private: these operations are the only ways to them, each with the
  // memory order its protocol step needs.

  /// The displaced header, relaxed: for a reader that validates what it
  /// read afterwards (MonitorRead), holds the registry lock, or keys the
  /// table by its hash.
  uint64_t displacedHeader() const {
    return DisplacedHeader.load(std::memory_order_relaxed);
  }
  /// The displaced header, acquire: A5 reads what a hash install wrote.
  uint64_t displacedHeaderAcquire() const {
    return DisplacedHeader.load(std::memory_order_acquire);
  }
  /// A hash install while inflated: CAS `Expected` -> `Hashed`, acq_rel.
  /// Fails once a deflater sealed the word (A5) or a hash went in first;
  /// `Expected` is then the word found.
  bool tryInstallHash(uint64_t &Expected, uint64_t Hashed) {
    return DisplacedHeader.compare_exchange_strong(Expected, Hashed,
                                                   std::memory_order_acq_rel);
  }
  /// A5's seal: CAS `Expected` -> `Sealed` (lock bits 00), acq_rel, weak
  /// (the caller loops); `Expected` is then the word found.
  bool trySealDisplacedHeader(uint64_t &Expected, uint64_t Sealed) {
    return DisplacedHeader.compare_exchange_weak(
        Expected, Sealed, std::memory_order_acq_rel, std::memory_order_acquire);
  }

  /// The generation, acquire: a MonitorRead's first look, before the fields
  /// it reads (A6's readers).
  uint64_t generationAcquire() const {
    return Generation.load(std::memory_order_acquire);
  }
  /// The generation, relaxed: a MonitorRead's second look, after its fence.
  uint64_t generationRaw() const {
    return Generation.load(std::memory_order_relaxed);
  }

  /// How long the next contended enter spins, in rounds (AdaptiveSpin.h),
  /// relaxed: a lost update only makes one guess worse.
  uint32_t spinBudget() const {
    return SpinBudget.load(std::memory_order_relaxed);
  }
  void setSpinBudget(uint32_t Rounds) {
    SpinBudget.store(Rounds, std::memory_order_relaxed);
  }

  /// The owner word, relaxed: a snapshot, which a CAS, the queue lock or a
  /// later acquire orders (M1, N2, J3, XQ).
  uintptr_t ownerRaw() const { return Owner.load(std::memory_order_relaxed); }
  /// The owner word, acquire: for a reader that goes on to read what the
  /// owner wrote before it took the monitor (queries, the owner's exit).
  uintptr_t ownerAcquire() const {
    return Owner.load(std::memory_order_acquire);
  }
  /// The owner word, seq_cst: a spinner's second look before it reads the
  /// owner's thread, against the fence of waitForOwnerPeeks.
  uintptr_t ownerForPeek() const {
    return Owner.load(std::memory_order_seq_cst);
  }
  /// M1: CAS 0 -> `Self`, acquire (the lock acquisition), tested first so
  /// that a taken monitor's line is not written.
  bool tryTakeOwner(const jitlock_thread &Self) {
    uintptr_t Free = 0;
    return Owner.load(std::memory_order_relaxed) == 0 &&
           Owner.compare_exchange_strong(Free, owner::encode(&Self),
                                         std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  /// A4: cancels a deflation between A1 and its abort, CAS DEFLATER ->
  /// `Self`, acquire, tested first like tryTakeOwner.
  bool tryCancelDeflation(const jitlock_thread &Self) {
    uintptr_t Marker = owner::DeflaterMarker;
    return Owner.load(std::memory_order_relaxed) == Marker &&
           Owner.compare_exchange_strong(Marker, owner::encode(&Self),
                                         std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  /// XQ's direct handoff: CAS 0 -> `Heir`, acq_rel (the heir takes over
  /// from the last owner's release).
  bool tryHandOff(const jitlock_thread &Heir) {
    uintptr_t Free = 0;
    return Owner.compare_exchange_strong(Free, owner::encode(&Heir),
                                         std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
  }
  /// The fast-lock owner fixes an anonymous owner to itself, acq_rel. Nobody
  /// else writes an anonymous owner word: enterers CAS it only from 0 or
  /// DEFLATER.
  void setOwnerFromAnonymous(const jitlock_thread &Self) {
    Owner.exchange(owner::encode(&Self), std::memory_order_acq_rel);
  }
  /// N3: the release store of 0; the critical section's writes go before it.
  void releaseOwner() { Owner.store(0, std::memory_order_release); }
  /// A1: CAS 0 -> DEFLATER, acquire.
  bool tryMarkDeflating() {
    uintptr_t Free = 0;
    return Owner.compare_exchange_strong(Free, owner::DeflaterMarker,
                                         std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  /// The deflater's abort: CAS DEFLATER -> 0, release. False when an
  /// enterer cancelled the deflation (A4) and owns the monitor.
  bool tryUnmarkDeflating() {
    uintptr_t Marker = owner::DeflaterMarker;
    return Owner.compare_exchange_strong(Marker, 0, std::memory_order_release,
                                         std::memory_order_relaxed);
  }
  /// A monitor that was never published goes back to the free list with
  /// the marker, so that a stale reader starts over from the header.
  void markDiscarded() {
    Owner.store(owner::DeflaterMarker, std::memory_order_relaxed);
  }

  /// Holds minus one, relaxed: only the owner writes it (M2, N2); a
  /// deflater reads it after its A1 acquire (A2), a query as a snapshot.
  uint64_t recursions() const {
    return Recursions.load(std::memory_order_relaxed);
  }
  /// The owner sets its count: inflation, wait's save and restore, N2's
  /// decrement, release-all.
  void setRecursions(uint64_t Value) {
    Recursions.store(Value, std::memory_order_relaxed);
  }
  /// M2: one more hold, a plain (relaxed) load and store.
  void incRecursions() { setRecursions(recursions() + 1); }

  /// Threads in the entry queue, relaxed: exits (N3, XQ) and deflaters (A1,
  /// A2) read it without the queue lock; append and unlink write it under
  /// the lock.
  uint32_t entryCount() const {
    return EntryCount.load(std::memory_order_relaxed);
  }
  /// Threads in the wait set, as entryCount.
  uint32_t waitCount() const {
    return WaitCount.load(std::memory_order_relaxed);
  }

  /// A4: an enterer counts itself, acq_rel (against A3's CAS); returns the
  /// count before, negative once a deflation has won (A3).
  int32_t addContention() {
    return Contentions.fetch_add(1, std::memory_order_acq_rel);
  }
  /// A4: the enterer takes its count back once it owns the monitor or
  /// gives up on it, release: nothing it did since the count floats below.
  void removeContention() {
    Contentions.fetch_sub(1, std::memory_order_release);
  }
  /// A4: takes back a count that found a deflation won (A3): nothing to
  /// order, the monitor is not taken.
  void undoContention() { Contentions.fetch_sub(1, std::memory_order_relaxed); }
  /// A4: the one more contention a canceller adds for the deflater's abort
  /// to take back (removeContention).
  void addCancelContention() {
    Contentions.fetch_add(1, std::memory_order_relaxed);
  }
  /// The count, relaxed: a deflater's A2 (after A1's acquire), a
  /// MonitorRead's check between its fences.
  int32_t contentions() const {
    return Contentions.load(std::memory_order_relaxed);
  }
  /// Whether a deflation has won (A3), acquire: a table cache hit trusts
  /// the monitor only otherwise.
  bool deflationWon() const {
    return Contentions.load(std::memory_order_acquire) < 0;
  }
  /// A3: the decision, CAS 0 -> DeflatedContentions, acq_rel. Fails once an
  /// enterer has counted itself (A4).
  bool tryDecideDeflation() {
    int32_t None = 0;
    return Contentions.compare_exchange_strong(None, DeflatedContentions,
                                               std::memory_order_acq_rel,
                                               std::memory_order_relaxed);
  }

  /// Makes this free monitor the one for `Object`: a new generation around
  /// the identity's change, for the readers MonitorRead serves.
  void prepareFor(void *NewObject, uint64_t Displaced, uintptr_t OwnerWord,
                  uint64_t Holds);

  /// The layout's offsets of the words inline code reads (Layout.cpp).
  static size_t ownerOffset();
  static size_t recursionsOffset();
  static size_t entryCountOffset();

  // Line 0.
  void *Object;

private:
  /// The object's header in unlocked form; hash installs CAS it while the
  /// object is inflated. A deflater seals it (lock bits 00, A5) just before
  /// writing it back, which sends hash installs to the object's header.
  std::atomic<uint64_t> DisplacedHeader;
  /// Even, and one step further each time the monitor is reused; odd while
  /// newMonitor rewrites it for its next object (a sequence lock around
  /// Object and DisplacedHeader). Readers that no handshake covers check it
  /// to tell this object's monitor from the same storage reused for another.
  std::atomic<uint64_t> Generation{0};

public:
  /// The next monitor of the registry while registered (pushed with a CAS,
  /// unlinked under the registry lock), of its free batch while free.
  std::atomic<Monitor *> RegistryNext{nullptr};
  /// On a free list, in the first monitor of a batch: the next batch.
  Monitor *NextFreeBatch = nullptr;

  // Line 1.
private:
  alignas(CacheLine) std::atomic<uintptr_t> Owner;
  /// Holds minus one. Written only by the owner.
  std::atomic<uint64_t> Recursions;
  /// Threads in the entry queue; written under QueueLock (append, unlink),
  /// read by exits without it.
  std::atomic<uint32_t> EntryCount{0};

public:
  // Line 2: guarded by QueueLock, counts readable without it.
  alignas(CacheLine) SpinLock QueueLock;
  QueueNode *EntryHead = nullptr, *EntryTail = nullptr;
  QueueNode *WaitHead = nullptr, *WaitTail = nullptr;

private:
  std::atomic<uint32_t> WaitCount{0};
  /// Enterers between their A4 count and their acquisition, plus one per
  /// deflation cancelled and not yet noticed by its deflater; negative
  /// (DeflatedContentions and up) once a deflation has won.
  std::atomic<int32_t> Contentions{0};

public:
  /// Appends to / unlinks from one of the two queues; QueueLock held.
  void append(QueueNode::Where Q, QueueNode &N);
  void unlink(QueueNode &N);

private:
  /// Line 2 still: how long the next contended enter spins before it
  /// parks, in rounds (AdaptiveSpin.h), written by contending enterers.
  /// Relaxed: a lost update only makes one guess worse. A reused monitor keeps
  /// its previous object's budget, which spin::budget clamps.
  std::atomic<uint32_t> SpinBudget{spin::InitialBudget};

  // Its table prints every field's offset, private ones included.
  friend void ::jitlock_rt_print_layout(FILE *Out);
};

// offsetof on a class with private members is conditionally supported:
// clang and GCC give the offset, and Monitor has no virtual function or
// base that would make it differ.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
inline size_t Monitor::ownerOffset() { return offsetof(Monitor, Owner); }
inline size_t Monitor::recursionsOffset() {
  return offsetof(Monitor, Recursions);
}
inline size_t Monitor::entryCountOffset() {
  return offsetof(Monitor, EntryCount);
}
#pragma GCC diagnostic pop

/// Every live monitor, for GC roots, owner scans, deflation and shutdown.
/// newMonitor registers a monitor before its address can be published in a
/// header, so that a scan of the registry sees every monitor a thread could
/// own. It reuses a free monitor when there is one. Null only for index
/// storage whose region is full even after deflating for space (where the
/// caller may): the inflating operation fails with JITLOCK_ENOMEM.
/// Takes no lock while the calling thread's own free list has a monitor.
Monitor *newMonitor(void *Object, uint64_t DisplacedHeader, uintptr_t OwnerWord,
                    uint64_t Recursions);
/// Index storage: sets `N` monitors aside for the calling thread's next
/// inflations, which then cannot run out (restore-locks must not fail
/// half-way). False, with none set aside, when there are not that many even
/// after deflating for space. Always true for the other storages.
bool reserveMonitors(size_t N);
/// Puts back what is left of the calling thread's reservation.
void releaseReservation();
/// Unregisters a monitor that was never published and frees it for reuse.
void discardMonitor(Monitor *M);
/// Puts `T`'s free monitors back on the global free list; at detach, from
/// `T`'s own OS thread.
void releaseFreeMonitors(jitlock_thread &T);
/// Calls `Fn(Monitor &)` for each live monitor under the registry lock.
template <typename Fn> void forEachMonitor(Fn &&F);

/// How many monitors a free batch holds at most: what a thread takes from
/// the global free list (or carves from the index region) at a time.
inline constexpr uint32_t FreeBatchSize = 16;

/// Free monitors in batches of at most FreeBatchSize, each linked through
/// RegistryNext, the batches through their first monitor's NextFreeBatch.
/// Taking or adding a batch is O(1).
struct FreeBatches {
  Monitor *First = nullptr;
  Monitor *Last = nullptr;
  /// How many monitors batch First holds, for add.
  uint32_t FirstSize = 0;

  bool empty() const { return !First; }
  /// Adds `M` to batch First, or starts a new batch when that one is full.
  void add(Monitor *M);
  /// Adds a chain linked through RegistryNext as one batch.
  void addBatch(Monitor *Chain);
  /// Moves every batch of `Other` here.
  void splice(FreeBatches &Other);
  /// Takes batch First, or null.
  Monitor *takeBatch();
};
/// Monitors a sweep unregistered.
using DeflatedChain = FreeBatches;
/// Calls `Deflate(Monitor &)` for each live monitor under the registry lock
/// and unregisters each one for which it returns true, adding it to
/// `Deflated`, still unusable: freeMonitors makes them reusable once no
/// thread can hold an address of them (A6). Returns how many were
/// unregistered; `Kept` gets how many stayed, as the sweep ends.
size_t sweepMonitors(bool (*Deflate)(Monitor &), DeflatedChain &Deflated,
                     uint64_t &Kept);
/// Puts what sweepMonitors unregistered on the global free list.
void freeMonitors(DeflatedChain &Deflated);
/// sweepMonitors for a cycle outside a safepoint (one at a time): what it
/// unregisters goes to the chain of the cycle in flight, where the holder
/// of a safepoint may free it too (every other thread is stopped or safe).
size_t sweepMonitorsInFlight(bool (*Deflate)(Monitor &), uint64_t &Kept);
/// Whether the chain of the cycle in flight holds monitors.
bool monitorsInFlight();
/// freeMonitors for the chain of the cycle in flight.
void freeMonitorsInFlight();
/// One step further each time monitors become free: an allocation that
/// failed tells by it whether to try again.
uint64_t freeEpoch();
/// For an allocation that found the index region full when freeEpoch() was
/// `EpochSeen` (Deflation.cpp): runs a deflation cycle, or waits for the one
/// in flight, unless the caller is a handshake operation, which may not.
/// Whether monitors became free since `EpochSeen`: worth another try.
bool deflateForSpace(uint64_t EpochSeen);
/// For tests only: called by a deflation cycle outside a safepoint between
/// its sweep and its handshake (A6), holding only the cycle lock.
extern std::atomic<void (*)()> CycleSweptTestHook;
/// Registered monitors: installed in a header, or about to be.
uint64_t monitorsAlive();
/// Monitors in memory: registered, deflated and waiting for their
/// handshake (A6), or free (on the global list or a thread's).
uint64_t monitorsAllocated();
/// Wakes the deflation thread (Deflation.cpp) once monitorsAlive() reaches
/// it; UINT64_MAX when no thread waits for that.
extern std::atomic<uint64_t> DeflationTrigger;
/// Called by the inflation that reached DeflationTrigger.
void requestDeflation();
/// Frees every monitor, live or free, restoring the headers of objects that
/// still point at one unless `WriteBack` is false (the objects' memory may
/// be gone: jitlock_rt_shutdown_forget). Only while no thread is attached.
void freeAllMonitors(bool WriteBack = true);

/// The allocation side's counters, since the process started.
struct FreeListFigures {
  /// Times a thread's own list was refilled with a batch (from the global
  /// list or carved from the index region).
  uint64_t Refills = 0;
  /// Times allocation took the registry lock: refills, discards, callers
  /// without a thread list, returns to the global list.
  uint64_t LockedAllocations = 0;
  /// Thread lists emptied onto the global list because the index region
  /// was full.
  uint64_t Steals = 0;
};
FreeListFigures freeListFigures();

namespace detail {
void lockMonitorRegistry();
void unlockMonitorRegistry();
Monitor *firstMonitor();
} // namespace detail

template <typename Fn> void forEachMonitor(Fn &&F) {
  detail::lockMonitorRegistry();
  for (Monitor *M = detail::firstMonitor(); M;
       M = M->RegistryNext.load(std::memory_order_relaxed))
    F(*M);
  detail::unlockMonitorRegistry();
}

} // namespace jitlock

#endif
