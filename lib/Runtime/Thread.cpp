//===- Thread.cpp - Thread storage, the lock stack, the thread registry ---===//
#include "Thread.h"
#include "Arch/Arch.h"
#include "Reservation.h"

#include <cstring>

namespace jitlock {

static_assert(offsetof(jitlock_thread, LockStackSentinel) ==
                  offsetof(jitlock_thread, LockStackSlots) - sizeof(void *),
              "the sentinel must sit just below the first slot");
static_assert(offsetof(jitlock_thread, LockStackSlots) % CacheLine == 0,
              "the slots fill one cache line of their own");
static_assert(offsetof(jitlock_thread, LockStackTop) / CacheLine ==
                  offsetof(jitlock_thread, LockStackSentinel) / CacheLine,
              "the top and the sentinel share the owner's first line");
static_assert(offsetof(jitlock_thread, Node) / CacheLine !=
                      offsetof(jitlock_thread, LockStackSlots) / CacheLine &&
                  offsetof(jitlock_thread, Node) >= LockStack::endOffset(),
              "fields that other threads write need their own line");
static_assert(offsetof(jitlock_thread, Interrupted) / CacheLine ==
                      offsetof(jitlock_thread, Node) / CacheLine &&
                  offsetof(jitlock_thread, WaitingOn) / CacheLine ==
                      offsetof(jitlock_thread, Node) / CacheLine,
              "an interrupter writes the flag beside the node it pokes");
static_assert(offsetof(jitlock_thread, BlockedOn) >=
                  offsetof(jitlock_thread, Node) + CacheLine,
              "owner-written query state must not share the foreign line");

static_assert(offsetof(jitlock_thread, PollWord) % CacheLine == 0 &&
                  offsetof(jitlock_thread, Handshake) >=
                      offsetof(jitlock_thread, PollWord) + CacheLine,
              "the poll word, written by other threads and read by every "
              "poll, has a line of its own");
static_assert(offsetof(jitlock_thread, MonitorBase) / CacheLine ==
                  offsetof(jitlock_thread, LockStackTop) / CacheLine,
              "the monitor base sits on the owner's hot first line");
static_assert(offsetof(jitlock_thread, MonitorCache) % CacheLine == 0 &&
                  sizeof(jitlock_thread::MonitorCache) == CacheLine &&
                  sizeof(MonitorCacheEntry) == 16,
              "the monitor cache is one line of its own, 16-byte entries");
static_assert(offsetof(jitlock_thread, State) / CacheLine ==
                  offsetof(jitlock_thread, BlockedOn) / CacheLine,
              "the thread state sits with the owner's query-read fields");

int LockStack::find(const void *Obj) const {
  for (int I = int(size()) - 1; I >= 0; --I)
    if (at(I) == Obj)
      return I;
  return -1;
}

unsigned LockStack::count(const void *Obj) const {
  unsigned N = 0;
  for (unsigned I = 0, E = size(); I != E; ++I)
    N += at(int(I)) == Obj;
  return N;
}

void LockStack::removeAt(unsigned I) {
  unsigned Size = size();
  for (unsigned J = I; J + 1 < Size; ++J)
    slot(J).store(at(int(J + 1)), std::memory_order_relaxed);
  setTop(topOffset() - 8);
}

void LockStack::insertAt(unsigned I, void *Obj) {
  unsigned Size = size();
  for (unsigned J = Size; J > I; --J)
    slot(J).store(at(int(J - 1)), std::memory_order_relaxed);
  slot(I).store(Obj, std::memory_order_relaxed);
  setTop(topOffset() + 8);
}

unsigned LockStack::removeAll(const void *Obj) {
  JITLOCK_ASSERT(Obj, "X2", "removeAll of a null object");
  unsigned Kept = 0, Size = size();
  for (unsigned I = 0; I != Size; ++I) {
    void *Entry = at(int(I));
    if (Entry != Obj)
      slot(Kept++).store(Entry, std::memory_order_relaxed);
  }
  setTop(baseOffset() + Kept * 8);
  validateInDebug();
  return Size - Kept;
}

/// Whether `Obj`'s entries on `T`'s lock stack may be apart: reserved to
/// `T` (R1 pushes around other objects), or inflated by the revocation that
/// found them so (R3b).
static bool reservedApart(const jitlock_thread &T, const void *Obj) {
  if (!reservation::enabled())
    return false;
  uint64_t H = headerOf(Obj).load(std::memory_order_relaxed);
  return reservation::reservedTo(T, H) || header::hasMonitor(H);
}

void LockStack::validate() const {
  uint32_t Top = topOffset();
  JITLOCK_ASSERT(Top >= baseOffset() && Top <= endOffset(), "E5",
                 "lock stack top out of range");
  JITLOCK_ASSERT(Top % 8 == 0, "E5", "lock stack top not 8-aligned");
  JITLOCK_ASSERT(T.LockStackSentinel == LockStackSentinel, "E4",
                 "lock stack sentinel overwritten");
  unsigned Size = (Top - baseOffset()) / 8;
  for (unsigned I = 0; I != Size; ++I) {
    void *Entry = at(int(I));
    JITLOCK_ASSERT(Entry, "E5", "null entry below the lock stack top");
    // An object seen before must be the entry just below (recursion, E4),
    // unless it is reserved to T (R1) or was inflated by a revocation (R3b).
    if (I == 0 || at(int(I - 1)) == Entry || reservedApart(T, Entry))
      continue;
    for (unsigned J = 0; J + 1 < I; ++J)
      JITLOCK_ASSERT(at(int(J)) != Entry, "E4",
                     "an object's lock stack entries are not adjacent");
  }
}

// Initial-exec TLS gives every thread the same offset from the thread
// pointer, which is what `tls` mode compiles in.
// (jitlock_thread's own alignas keeps each thread's copy line-aligned.) A
// thread starts detached: its lock stack reads as full, so inline code run
// on it always takes the slow path, which refuses with ENOT_ATTACHED.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
thread_local constinit jitlock_thread ThreadStorage __attribute__((
    tls_model("initial-exec"))){.LockStackTop = LockStack::endOffset()};
#pragma GCC diagnostic pop

int64_t threadTlsOffset() {
  return reinterpret_cast<char *>(&ThreadStorage) - arch::threadPointer();
}

} // namespace jitlock
