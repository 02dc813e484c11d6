//===- Monitor.h - The inflated monitor -------------------------*- C++ -*-===//
//
// A monitor replaces the fast lock when an object is contended, re-entered
// non-adjacently, waited on, or pushed off a full lock stack. Its cache lines
// are grouped by writer:
//
//   line 0  identity: the object, the displaced header (hash installs CAS
//           it), registry links
//   line 1  the owner word and the recursion count: written by the owner, and
//           CASed by enterers; the inline paths read both together
//   line 2  the queue lock, the entry queue and the wait set
//
// The owner word holds the owning thread's address, 0, or AnonymousOwner,
// plus QueuedBit while the entry queue is non-empty. Keeping "someone is
// queued" in the owner word lets an exit release with one CAS (owner
// self -> 0), which fails exactly when it must hand the monitor over.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_MONITOR_H
#define JITLOCK_RUNTIME_MONITOR_H

#include "Thread.h"

#include <atomic>
#include <cstdint>

namespace jitlock {

namespace owner {
inline constexpr uintptr_t QueuedBit = 0b01;
/// Owned by some thread that holds the object fast-locked; set by a
/// contender that inflated it and cannot know which thread that is.
inline constexpr uintptr_t AnonymousOwner = 0b10;

inline uintptr_t encode(const jitlock_thread *T) {
  return reinterpret_cast<uintptr_t>(T);
}
/// The owner without the queued bit.
inline uintptr_t holder(uintptr_t Word) { return Word & ~QueuedBit; }
inline bool isQueued(uintptr_t Word) { return Word & QueuedBit; }
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

  // Line 0.
  void *Object;
  /// The object's header in unlocked form; hash installs CAS it while the
  /// object is inflated.
  std::atomic<uint64_t> DisplacedHeader;
  Monitor *RegistryNext = nullptr;
  Monitor *RegistryPrev = nullptr;

  // Line 1.
  alignas(CacheLine) std::atomic<uintptr_t> Owner;
  /// Holds minus one. Written only by the owner.
  std::atomic<uint64_t> Recursions;

  // Line 2: guarded by QueueLock, counts readable without it.
  alignas(CacheLine) SpinLock QueueLock;
  QueueNode *EntryHead = nullptr, *EntryTail = nullptr;
  QueueNode *WaitHead = nullptr, *WaitTail = nullptr;
  std::atomic<uint32_t> EntryCount{0};
  std::atomic<uint32_t> WaitCount{0};

  /// Appends to / unlinks from one of the two queues; QueueLock held.
  void append(QueueNode::Where Q, QueueNode &N);
  void unlink(QueueNode &N);

  /// One more hold by the owner, the only thread that writes the count.
  void addRecursion() {
    Recursions.store(Recursions.load(std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
  }
};

/// Every live monitor, for GC roots, owner scans and shutdown. A monitor is
/// registered before its address is published in a header, so that a scan
/// of the registry sees every monitor a thread could own.
void registerMonitor(Monitor *M);
/// Unregisters and frees a monitor that was never published.
void discardMonitor(Monitor *M);
/// Calls `Fn(Monitor &)` for each live monitor under the registry lock.
template <typename Fn> void forEachMonitor(Fn &&F);
uint64_t monitorsAlive();
/// Frees every monitor, restoring the headers of objects that still point at
/// one. Only while no thread is attached.
void freeAllMonitors();

namespace detail {
void lockMonitorRegistry();
void unlockMonitorRegistry();
Monitor *firstMonitor();
} // namespace detail

template <typename Fn> void forEachMonitor(Fn &&F) {
  detail::lockMonitorRegistry();
  for (Monitor *M = detail::firstMonitor(); M; M = M->RegistryNext)
    F(*M);
  detail::unlockMonitorRegistry();
}

} // namespace jitlock

#endif
