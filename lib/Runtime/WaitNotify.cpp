//===- WaitNotify.cpp - Wait, notify and interrupt ------------------------===//
//
// W1-W3 (wait), W2 (notify) and I1-I2 (interrupt) of the protocol comment
// at the top of Synchronizer.cpp. A waiter releases its monitor as an exit
// does (N3, XQ) and re-enters it through the entry queue (J1-J3) or, when
// interrupted or timed out, as an enterer counted in the contentions (A4).
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

#include "Parker.h"
#include "Safepoint.h"

namespace jitlock {

using namespace header;

//===----------------------------------------------------------------------===//
// Wait and notify
//===----------------------------------------------------------------------===//

/// The monitor of an object `T` owns, inflating a fast lock; null if `T`
/// does not own it.
static Monitor *ownedMonitorForWait(jitlock_thread &T, void *Obj,
                                    bool &OutOfMonitors) {
  uint64_t H = loadStableHeader(Obj);
  if (!isFastLocked(H))
    return monitorOwnedBy(T, Obj, H);
  if (!LockStack(T).contains(Obj))
    return nullptr;
  Monitor *M = inflateOwned(T, Obj);
  OutOfMonitors = !M;
  return M;
}

int wait(jitlock_thread &T, void *Obj, bool Timed, uint64_t TimeoutNs) {
  bool OutOfMonitors = false;
  Monitor *M = ownedMonitorForWait(T, Obj, OutOfMonitors);
  if (OutOfMonitors)
    return outOfMonitors(T, Obj, Caller::Api);
  if (!M)
    return misuse(JITLOCK_ENOT_OWNER, &T, Obj, "wait without owning");
  bump(T.Stats.Waits);

  uint64_t Deadline = 0;
  if (Timed) {
    uint64_t Now = monotonicNowNs();
    Deadline = TimeoutNs > UINT64_MAX - Now ? UINT64_MAX : Now + TimeoutNs;
  }

  QueueNode &Node = T.Node;
  M->QueueLock.lock();
  // W1: interrupted before the wait, it ends here, holding M throughout.
  T.WaitingOn.store(M, std::memory_order_seq_cst);
  if (T.Interrupted.load(std::memory_order_seq_cst)) {
    T.WaitingOn.store(nullptr, std::memory_order_relaxed);
    T.Interrupted.store(0, std::memory_order_relaxed);
    M->QueueLock.unlock();
    return JITLOCK_EINTERRUPTED;
  }
  Node.Thread = &T;
  Node.Wakeup.store(QueueNode::Sleep, std::memory_order_relaxed);
  Node.Losses = 0;
  Node.HandoffWanted = false;
  M->append(QueueNode::WaitSet, Node);
  M->QueueLock.unlock();

  uint64_t SavedRecursions = M->recursions();
  M->setRecursions(0);
  releaseMonitor(*M);

  // A notify moves the node to the entry queue without waking it; the first
  // wake-up comes from an exit, exactly as for a thread that queued to enter.
  // Marked blocked throughout: from the notify on, this thread waits to
  // enter, and the deadlock finder must see it.
  markBlocked(T, M);
  int Status = JITLOCK_OK;
  bool Counted = false;
  for (;;) {
    uint32_t Wake = Node.Wakeup.load(std::memory_order_acquire);
    bool Expired = false;
    if (Wake == QueueNode::Sleep) {
      if (parkBlocked(T, Node.Wakeup, QueueNode::Sleep, Timed ? Deadline : 0))
        continue;
      Expired = true;
    } else if (Wake != QueueNode::Interrupted) {
      break; // Notified, and woken in the entry queue by an exit.
    }
    // W3.
    M->QueueLock.lock();
    if (T.WaitingOn.load(std::memory_order_relaxed) == M) {
      if (T.Interrupted.load(std::memory_order_relaxed)) {
        T.Interrupted.store(0, std::memory_order_relaxed);
        Status = JITLOCK_EINTERRUPTED;
      } else if (Expired) {
        Status = JITLOCK_ETIMEDOUT;
      }
    }
    if (Status != JITLOCK_OK) {
      // Counted (A4) before it leaves the wait set, which kept M from being
      // deflated: M stays the object's, and re-entering it needs no new
      // monitor (none may be left, with index storage).
      Counted = M->addContention() >= 0;
      if (!Counted)
        M->undoContention();
      M->unlink(Node);
      T.WaitingOn.store(nullptr, std::memory_order_relaxed);
    } else if (Node.Wakeup.load(std::memory_order_relaxed) ==
               QueueNode::Interrupted) {
      // Poked after a notify moved it (or by an interrupt whose flag it has
      // consumed since): exits store their wake-ups under this lock.
      Node.Wakeup.store(QueueNode::Sleep, std::memory_order_relaxed);
    }
    bool Notified = T.WaitingOn.load(std::memory_order_relaxed) != M;
    M->QueueLock.unlock();
    if (Status != JITLOCK_OK)
      break;
    // Notified before the deadline: the monitor is on its way.
    if (Notified)
      Timed = false;
  }
  if (Status != JITLOCK_OK) {
    markUnblocked(T);
    if (Counted)
      enterCounted(T, *M);
    else
      M = enterInflated(T, Obj);
  } else {
    waitInEntryQueue(T, *M);
    markUnblocked(T);
  }
  M->setRecursions(SavedRecursions);
  return Status;
}

int notify(jitlock_thread &T, void *Obj, bool All) {
  uint64_t H = loadStableHeader(Obj);
  // A fast-locked object has no monitor, hence no waiters.
  if (isFastLocked(H) && LockStack(T).contains(Obj))
    return JITLOCK_OK;
  Monitor *M = monitorOwnedBy(T, Obj, H);
  if (!M)
    return misuse(JITLOCK_ENOT_OWNER, &T, Obj, "notify without owning");
  bump(T.Stats.Notifies);
  M->QueueLock.lock();
  while (QueueNode *Waiter = M->WaitHead) { // W2
    M->unlink(*Waiter);
    Waiter->Thread->WaitingOn.store(nullptr, std::memory_order_relaxed);
    M->append(QueueNode::EntryQueue, *Waiter);
    if (!All)
      break;
  }
  // The moved waiters count in EntryCount, which T's own exit reads.
  M->QueueLock.unlock();
  return JITLOCK_OK;
}

void interrupt(jitlock_thread &T) {
  T.Interrupted.store(1, std::memory_order_seq_cst); // I1
  for (;;) {
    Monitor *M = T.WaitingOn.load(std::memory_order_seq_cst);
    if (!M)
      return;
    // Monitors are type-stable, and freed only by a shutdown, which needs
    // `T` detached: M's lock is one even if M was deflated since.
    M->QueueLock.lock(); // I2
    if (T.WaitingOn.load(std::memory_order_relaxed) != M) {
      M->QueueLock.unlock();
      continue;
    }
    bool Poke =
        T.Interrupted.load(std::memory_order_relaxed) &&
        T.Node.Wakeup.load(std::memory_order_relaxed) == QueueNode::Sleep;
    if (Poke)
      T.Node.Wakeup.store(QueueNode::Interrupted, std::memory_order_release);
    M->QueueLock.unlock();
    // `T` cannot leave the wait call (and reuse its node) before it took the
    // lock after this store, and it stays attached meanwhile: the caller
    // holds the thread registry.
    if (Poke)
      wakeAll(T.Node.Wakeup);
    return;
  }
}

} // namespace jitlock
