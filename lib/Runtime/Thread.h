//===- Thread.h - The runtime thread and its lock stack ---------*- C++ -*-===//
//
// A jitlock_thread lives in its OS thread's static TLS, so JIT code in `tls`
// mode reaches it at thread pointer + a constant. Its cache lines are grouped
// by who writes them, so that no two threads' writes share a line:
//
//   line 0-1  JIT-hot, written only by the owner: the lock stack
//   line 2    written by other threads: the park word and queue links, the
//             interrupt flag and the wait set the thread is in
//   line 3    written only by the owner, read by queries and the safepoint
//             synchronizer: the thread state, blocking state and statistics
//   line 5-6  written only by the owner, read by queries: the stack zones
//             (StackGuard.h)
//   line 7    written by the safepoint synchronizer and handshake requesters,
//             read by JIT code at every poll: the poll word, alone
//   line 8    written by handshake requesters: the pending handshake
//             (Safepoint.cpp)
//   line 9    the monitor cache (table storage): written by the owner and by
//             handshakes run for it, read by JIT code
//   line 10   the thread's free monitors: popped by the owner, refilled and
//             emptied under the monitor registry lock (Monitor.cpp)
//
// Line 0 also holds the base of the monitor region (index storage), which
// JIT code loads next to the lock stack top.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_THREAD_H
#define JITLOCK_RUNTIME_THREAD_H

#include "Assert.h"
#include "jitlock/jitlock_rt.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace jitlock {

inline constexpr size_t CacheLine = 64;
inline constexpr uint32_t LockStackCapacity = 8;
/// Sits just below the first slot and equals no object, so "is the entry
/// below the top the same object?" needs no underflow test.
inline void *const LockStackSentinel = reinterpret_cast<void *>(~uintptr_t(0));

class Monitor;

/// Table storage: how many {object, monitor} pairs a thread caches, and how
/// many of them inline code compares before it calls the runtime.
inline constexpr uint32_t MonitorCacheEntries = 4;
inline constexpr uint32_t MonitorCacheProbes = 2;

/// One entry of a thread's monitor cache; Object 0 when empty. Atomic
/// because JIT code reads what the runtime writes (relaxed, on one thread,
/// or by a handshake while the owner is stopped).
struct MonitorCacheEntry {
  std::atomic<void *> Object{nullptr};
  std::atomic<Monitor *> Mon{nullptr};
};

/// A thread's node in a monitor's entry queue or wait set; a thread is in at
/// most one queue at a time. Every field but Wakeup belongs to the queue lock
/// of the monitor the node is queued on.
struct QueueNode {
  enum Where : uint32_t { None, EntryQueue, WaitSet };
  /// What the futex word says to a parked thread.
  enum Wake : uint32_t {
    Sleep = 0,   ///< Keep sleeping.
    Granted = 1, ///< An exiting owner handed this thread the monitor.
    Compete = 2, ///< The monitor was freed; try to take it.
    /// An interrupter found the thread in a wait set: it looks, under the
    /// queue lock, whether it is still there (wait in WaitNotify.cpp).
    Interrupted = 3
  };
  std::atomic<uint32_t> Wakeup{Sleep};
  /// Which queue the node is in. Atomic (relaxed) because the deadlock
  /// finder reads it under the lock of the monitor the thread was last seen
  /// blocked on, which may no longer be the node's; its epoch check discards
  /// such stale reads.
  std::atomic<uint32_t> Queue{None};
  /// Times this thread, as the queue's head, was woken and lost the monitor
  /// to a barging thread. Past a bound it asks for direct handoff.
  uint32_t Losses = 0;
  bool HandoffWanted = false;
  QueueNode *Next = nullptr;
  QueueNode *Prev = nullptr;
  jitlock_thread *Thread = nullptr;
};

/// Per-thread counters. Only the owner writes them (a relaxed load and store,
/// no read-modify-write); others read them for jitlock_rt_get_stats.
struct ThreadStats {
  std::atomic<uint64_t> FastLocks{0}, RecursiveLocks{0}, MonitorEnters{0},
      Inflations{0}, ContendedEnters{0}, Parks{0}, SlowPathCalls{0}, Waits{0},
      Notifies{0};
  /// Table storage: the runtime's own lookups that its monitor cache
  /// answered, and those that went to the table.
  std::atomic<uint64_t> CacheHits{0}, CacheMisses{0};
  /// Reserved locking: R2, R1 and R4 taken by the runtime (Reservation.h).
  std::atomic<uint64_t> Reservations{0}, ReservedEnters{0}, ReservedExits{0};
};

inline void bump(std::atomic<uint64_t> &Counter) {
  Counter.store(Counter.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
}

struct GuardedCall;
struct HandshakeOp;

/// A thread's own free monitors, so that an inflation takes one without a
/// lock (Monitor.cpp, "Free monitors").
struct ThreadFreeList {
  /// Linked through Monitor::RegistryNext. Only the owning thread pops
  /// (a CAS) and refills it; under the registry lock, a thread that finds
  /// the index region full empties it (an exchange), and detach does.
  std::atomic<Monitor *> Head{nullptr};
  /// Links of the registry's list of thread lists, which the owner joins at
  /// its first refill; guarded by the registry lock.
  ThreadFreeList *ListedNext = nullptr;
  ThreadFreeList *ListedPrev = nullptr;
  bool Listed = false;
};

/// The handshake addressed to a thread (Safepoint.cpp). Only one handshake
/// requester runs at a time, so one pending operation is enough.
struct HandshakeSlot {
  /// Held by whoever runs the pending operation: the thread itself at a
  /// poll or transition, or the requester while the thread is safe.
  std::mutex Lock;
  /// Guarded by Lock.
  HandshakeOp *Pending = nullptr;
};

/// A thread's stack guard zones (StackGuard.h). The bounds are written at
/// attach, before the thread is registered, and stay fixed while it is
/// attached; the rest is written by the owner (its bang slow path, its
/// recovery, its own SIGSEGV handler) and read by jitlock_rt_stack_info.
struct StackState {
  /// jitlock_stack_info's bounds; all 0 when the stack is unknown.
  uintptr_t Base = 0, End = 0, RedTop = 0, YellowTop = 0, ReservedTop = 0,
            SafeLimit = 0;
  uint32_t PageSize = 0;
  /// Bit i (jitlock_stack_zone) while zone i is protected. The backstop
  /// clears a bit from the signal handler, hence atomic.
  std::atomic<uint32_t> ProtectedZones{0};
  /// The innermost jitlock_rt_call_guarded; read by the signal handler.
  std::atomic<GuardedCall *> Innermost{nullptr};
  std::atomic<uint64_t> Bangs{0}, Overflows{0};
  /// The zones attach protected, which recovery protects again.
  uint32_t WantedZones = 0;
  /// The alternate signal stack's mapping (guard page included), and the
  /// alternate stack it replaced, restored at detach.
  void *AltMapping = nullptr;
  size_t AltMappingSize = 0;
  void *PrevAltSp = nullptr;
  size_t PrevAltSize = 0;
  int PrevAltFlags = 0;
};

} // namespace jitlock

struct alignas(jitlock::CacheLine) jitlock_thread {
  // Line 0: owner-written; JIT code reads and writes LockStackTop.
  /// Byte offset, from this structure, of the next free lock stack slot.
  uint32_t LockStackTop;
  uint32_t Attached;
  uint64_t Id;
  uint64_t HashState;
  /// The stack-bang watermark: a method entry whose stack pointer is above
  /// it skips the bang (jitlock_rt_stack_bang). 0 while detached, so that
  /// checked code on a thread the runtime knows no stack of never calls it.
  uintptr_t StackWatermark;
  /// Index storage: the address of monitor 0 of the monitor region, set at
  /// attach (MonitorStorage.h); 0 under the other strategies.
  uintptr_t MonitorBase;
  /// The embedder's pointer (jitlock_rt_set_thread_data); never read here.
  void *UserData;
  /// Reserved locking: unlocked_value | this thread's reserve index <<
  /// reserve_shift, which a header reserved to it shows under the reserve
  /// mask; ~0 (matches no header) while it may not reserve.
  uint64_t ReserveTag;
  void *LockStackSentinel;
  // Line 1: the lock stack slots, oldest first.
  void *LockStackSlots[jitlock::LockStackCapacity];
  // Line 2: written by other threads.
  alignas(jitlock::CacheLine) jitlock::QueueNode Node;
  /// The monitor in whose wait set Node is, else null. Written only under
  /// that monitor's queue lock (the waiter joining and leaving, a notify
  /// moving it), so an interrupter holding a monitor's queue lock that
  /// reads that monitor here knows the thread waits there.
  std::atomic<jitlock::Monitor *> WaitingOn;
  /// 1 once jitlock_rt_interrupt was called for the thread, until the
  /// thread consumes it: a wait that returns JITLOCK_EINTERRUPTED,
  /// jitlock_rt_clear_interrupt, or the next attach.
  std::atomic<uint32_t> Interrupted;
  // Line 3: owner-written, read by queries and the safepoint synchronizer.
  /// jitlock_thread_state, published with seq_cst stores: a synchronizer
  /// arms the poll word and then reads this, the thread stores this and then
  /// reads the poll word, so one of the two sees the other.
  alignas(jitlock::CacheLine) std::atomic<uint32_t> State;
  /// The safepoint whose barrier this thread waits at (or is about to), 0
  /// outside one; with State it makes the synchronizer's stable load.
  std::atomic<uint64_t> SafepointId;
  std::atomic<jitlock::Monitor *> BlockedOn;
  /// Odd while parked in a monitor enter; the deadlock finder uses it to
  /// tell a thread that stayed blocked from one that moved.
  std::atomic<uint64_t> BlockEpoch;
  jitlock::ThreadStats Stats;
  // Line 5-6: owner-written, read by queries.
  alignas(jitlock::CacheLine) jitlock::StackState Stack;
  // Line 7: the poll word, written by other threads, read by every poll.
  alignas(jitlock::CacheLine) std::atomic<uint64_t> PollWord;
  // Line 8: written by handshake requesters.
  alignas(jitlock::CacheLine) jitlock::HandshakeSlot Handshake;
  // Line 9: table storage's monitor cache, most recently used first. Written
  // by the owner (the runtime's table lookups) and by handshakes run for it
  // (the A6 handshake empties it); read by JIT code.
  alignas(jitlock::CacheLine) jitlock::MonitorCacheEntry
      MonitorCache[jitlock::MonitorCacheEntries];
  // Line 10: free monitors, popped by the owner.
  alignas(jitlock::CacheLine) jitlock::ThreadFreeList FreeMonitors;
};

namespace jitlock {

/// The lock stack. It is the list of objects the thread holds fast-locked,
/// oldest first, kept inside the thread so that JIT code addresses the top
/// slot as [thread + top]. Invariants:
///
///  1. base <= top <= end. Slots [base, top) hold the fast-locked objects.
///  2. Each entry's header is fast-locked (00), or has a monitor whose owner
///     is ANONYMOUS because a contender inflated it; this thread fixes that
///     owner at its next operation on the object.
///  3. One object's entries are adjacent: re-entry is a duplicate push on
///     top ([A A]); non-adjacent re-entry inflates instead.
///  4. The slot below base holds LockStackSentinel.
///
/// Only the owning thread writes it (or another thread while the owner is
/// stopped, for deopt relocking). Queries read it racily, so every access is
/// an atomic access, which JIT code's plain loads and stores also are.
class LockStack {
public:
  explicit LockStack(jitlock_thread &T) : T(T) {}

  static constexpr uint32_t baseOffset() {
    return offsetof(jitlock_thread, LockStackSlots);
  }
  static constexpr uint32_t endOffset() {
    return baseOffset() + LockStackCapacity * sizeof(void *);
  }

  uint32_t size() const { return (topOffset() - baseOffset()) / 8; }
  bool isEmpty() const { return topOffset() == baseOffset(); }
  bool isFull() const { return topOffset() == endOffset(); }

  /// Entry `I`, oldest first; -1 reads the sentinel.
  void *at(int I) const {
    if (I < 0)
      return T.LockStackSentinel;
    return slot(unsigned(I)).load(std::memory_order_relaxed);
  }
  /// The top entry, or the sentinel when empty.
  void *top() const { return at(int(size()) - 1); }

  void push(void *Obj) {
    JITLOCK_ASSERT(!isFull(), "E5", "push on a full lock stack");
    JITLOCK_ASSERT(Obj, "E5", "push of a null object");
    slot(size()).store(Obj, std::memory_order_relaxed);
    setTop(topOffset() + 8);
    validateInDebug();
  }
  /// Pops the top entry and returns it.
  void *pop() {
    JITLOCK_ASSERT(!isEmpty(), "X1", "pop from an empty lock stack");
    setTop(topOffset() - 8);
    void *Obj = at(int(size()));
    validateInDebug();
    return Obj;
  }
  /// Pops the top entry, which must be `Expected`.
  void pop(const void *Expected) {
    JITLOCK_ASSERT(!isEmpty(), "X1", "pop from an empty lock stack");
    JITLOCK_ASSERT(top() == Expected, "X1",
                   "pop of an object that is not on top of the lock stack");
    pop();
  }

  /// Index of the topmost entry equal to `Obj`, or -1.
  int find(const void *Obj) const;
  bool contains(const void *Obj) const { return find(Obj) >= 0; }
  unsigned count(const void *Obj) const;
  void removeAt(unsigned I);
  void insertAt(unsigned I, void *Obj);
  /// Removes every entry of `Obj` and returns how many there were.
  unsigned removeAll(const void *Obj);

  /// Checks invariants 1, 3 and 4 (2 is the header's, checked by callers):
  /// the top in range and 8-aligned, no null entry below it, and one
  /// object's entries adjacent. Slots above the top are stale and not read.
  /// Aborts through JITLOCK_ASSERT; only meaningful for the owner, or while
  /// the owner is stopped.
  void validate() const;

private:
  uint32_t topOffset() const {
    return std::atomic_ref<uint32_t>(T.LockStackTop)
        .load(std::memory_order_relaxed);
  }
  void setTop(uint32_t Offset) {
    std::atomic_ref<uint32_t>(T.LockStackTop)
        .store(Offset, std::memory_order_relaxed);
  }
  std::atomic_ref<void *> slot(unsigned I) const {
    return std::atomic_ref<void *>(T.LockStackSlots[I]);
  }

  void validateInDebug() const {
    if constexpr (AssertionsEnabled)
      validate();
  }

  jitlock_thread &T;
};

/// Every OS thread's jitlock_thread, in static TLS (Thread.cpp). Declared
/// here, constinit, so that the C entry points reach it with one
/// thread-pointer-relative address and no TLS wrapper call.
extern thread_local constinit jitlock_thread ThreadStorage
    __attribute__((tls_model("initial-exec")));

/// The calling OS thread's runtime thread, attached or not.
inline jitlock_thread &currentThreadStorage() { return ThreadStorage; }
/// The calling thread if attached, else null.
inline jitlock_thread *currentThread() {
  return ThreadStorage.Attached ? &ThreadStorage : nullptr;
}

/// Thread-pointer-relative offset of the calling thread's jitlock_thread.
int64_t threadTlsOffset();

/// Calls `F(jitlock_thread &)` for every attached thread. The registry lock
/// is held throughout, so no thread detaches (and frees its storage) while
/// `F` reads it.
template <typename Fn> void forEachThread(Fn &&F);

namespace detail {
void lockThreadRegistry();
void unlockThreadRegistry();
size_t attachedThreadCount();
jitlock_thread *attachedThread(size_t I);
} // namespace detail

template <typename Fn> void forEachThread(Fn &&F) {
  detail::lockThreadRegistry();
  for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I)
    F(*detail::attachedThread(I));
  detail::unlockThreadRegistry();
}

/// Calls `F(jitlock_thread &)` for `T` if it is attached and returns whether
/// it did. For another thread the registry lock is held during the call, so
/// that `T` stays attached (and its storage alive) while `F` reads it.
template <typename Fn>
bool withAttachedThread(const jitlock_thread *T, Fn &&F) {
  if (!T)
    return false;
  if (T == currentThread()) {
    F(*currentThread());
    return true;
  }
  bool Found = false;
  forEachThread([&](jitlock_thread &Other) {
    if (&Other == T) {
      F(Other);
      Found = true;
    }
  });
  return Found;
}

} // namespace jitlock

#endif
