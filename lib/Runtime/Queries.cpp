//===- Queries.cpp - Owner queries, deadlock detection, GC roots ----------===//
//
// These read other threads' lock stacks and monitors while those threads
// run. Each function's guarantee is stated in jitlock_rt.h and
// docs/runtime.md; the registry lock keeps every thread read here attached.
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include "Monitor.h"
#include "MonitorStorage.h"
#include "ObjectHeader.h"
#include "Safepoint.h"
#include "StackGuard.h"
#include "Synchronizer.h"
#include "Thread.h"

#include <algorithm>
#include <vector>

using namespace jitlock;

/// The attached thread whose lock stack holds `Obj`, and how many times.
static jitlock_thread *scanLockStacks(const void *Obj, uint64_t *Holds) {
  jitlock_thread *Found = nullptr;
  forEachThread([&](jitlock_thread &T) {
    if (Found)
      return;
    if (unsigned N = LockStack(T).count(Obj)) {
      Found = &T;
      if (Holds)
        *Holds = N;
    }
  });
  return Found;
}

/// One look at `Obj`'s lock. False when the monitor it read was deflated
/// meanwhile, and perhaps reused for another object: look again.
static bool inspectOnce(const void *Obj, jitlock_lock_info *Info) {
  *Info = jitlock_lock_info{};
  uint64_t H = headerOf(Obj).load(std::memory_order_acquire);
  if (header::isUnlocked(H)) {
    Info->state = JITLOCK_STATE_UNLOCKED;
    return true;
  }
  if (header::isEmbedderOwned(H)) {
    Info->state = JITLOCK_STATE_EMBEDDER;
    return true;
  }
  if (header::isFastLocked(H)) {
    Info->state = JITLOCK_STATE_FAST;
    // The owner may be shifting its lock stack (an unstructured exit or an
    // inflation below the entry) while we read it; look again while the
    // header says the object is still fast-locked.
    for (int Try = 0; Try < 16 && !Info->owner; ++Try) {
      Info->owner = scanLockStacks(Obj, &Info->holds);
      if (headerOf(Obj).load(std::memory_order_acquire) != H)
        break;
    }
    return true;
  }
  MonitorRead Read(Obj, H);
  Info->state = JITLOCK_STATE_INFLATED;
  if (!Read.found())
    return false;
  Monitor &M = Read.monitor();
  Info->entry_queued = M.entryCount();
  Info->waiting = M.waitCount();
  uintptr_t Holder = M.ownerAcquire();
  if (Holder == owner::AnonymousOwner) {
    Info->anonymous_owner = 1;
    Info->owner = scanLockStacks(Obj, &Info->holds);
  } else if (jitlock_thread *Owner = owner::threadOf(Holder)) {
    // A deflater's marker reads as unowned: the monitor was idle.
    Info->owner = Owner;
    Info->holds = M.recursions() + 1;
  }
  return Read.validate();
}

int jitlock_rt_inspect(const void *Obj, jitlock_lock_info *Info) {
  if (!Info)
    return JITLOCK_EINVAL;
  *Info = jitlock_lock_info{};
  if (!Obj)
    return JITLOCK_ENULL;
  for (int Try = 0; !inspectOnce(Obj, Info) && Try < 16; ++Try) {
  }
  return JITLOCK_OK;
}

jitlock_thread *jitlock_rt_owner_of(const void *Obj) {
  jitlock_lock_info Info;
  if (jitlock_rt_inspect(Obj, &Info) != JITLOCK_OK)
    return nullptr;
  return Info.owner;
}

int jitlock_rt_holds_lock(const jitlock_thread *T, const void *Obj) {
  if (!T || !Obj)
    return 0;
  bool OnLockStack = false;
  if (!withAttachedThread(T, [&](jitlock_thread &Thread) {
        OnLockStack = LockStack(Thread).contains(Obj);
      }))
    return 0;
  if (OnLockStack)
    return 1;
  // Through a monitor, read as inspectOnce reads it: the caller may be one
  // that no handshake covers.
  for (int Try = 0;; ++Try) {
    uint64_t H = headerOf(Obj).load(std::memory_order_acquire);
    if (!header::hasMonitor(H))
      return 0;
    MonitorRead Read(Obj, H);
    uintptr_t Holder = Read.found() ? Read.monitor().ownerAcquire() : 0;
    if (Read.validate() || Try == 15)
      return Holder == owner::encode(T);
  }
}

size_t jitlock_rt_lock_stack(const jitlock_thread *T, void **Out, size_t Cap) {
  size_t Depth = 0;
  // The registry lock keeps another thread attached while we copy.
  withAttachedThread(T, [&](jitlock_thread &Thread) {
    LockStack LS(Thread);
    Depth = LS.size();
    for (size_t I = 0; I < Depth && I < Cap; ++I)
      Out[I] = LS.at(int(I));
  });
  return Depth;
}

//===----------------------------------------------------------------------===//
// Deadlock detection
//===----------------------------------------------------------------------===//

namespace {
/// One blocked thread: what it waits for, and who holds that.
struct BlockedEdge {
  jitlock_thread *Thread;
  uint64_t Epoch;
  Monitor *On;
  jitlock_thread *Holder;
};
} // namespace

/// Whether `T` sleeps in `M`'s entry queue (not in its wait set).
static bool inEntryQueue(jitlock_thread &T, Monitor &M) {
  M.QueueLock.lock();
  bool Queued =
      T.Node.Queue.load(std::memory_order_relaxed) == QueueNode::EntryQueue;
  M.QueueLock.unlock();
  return Queued;
}

/// The thread that owns `M`, resolving an anonymous owner through the lock
/// stacks. Registry lock held.
static jitlock_thread *holderOf(Monitor &M) {
  uintptr_t Holder = M.ownerAcquire();
  if (Holder == owner::AnonymousOwner) {
    jitlock_thread *Found = nullptr;
    for (size_t I = 0, E = detail::attachedThreadCount(); I != E && !Found; ++I)
      if (LockStack(*detail::attachedThread(I)).contains(M.Object))
        Found = detail::attachedThread(I);
    return Found;
  }
  return owner::threadOf(Holder);
}

size_t jitlock_rt_find_deadlocks(jitlock_deadlock_fn Fn, void *Ctx) {
  struct Cycle {
    std::vector<jitlock_thread *> Threads;
    std::vector<void *> Objs;
  };
  std::vector<Cycle> Found;
  detail::lockThreadRegistry();
  // First read: every blocked thread and the owner of what it waits for.
  std::vector<BlockedEdge> Edges;
  for (size_t I = 0, E = detail::attachedThreadCount(); I != E; ++I) {
    jitlock_thread &T = *detail::attachedThread(I);
    uint64_t Epoch = T.BlockEpoch.load(std::memory_order_acquire);
    Monitor *On = T.BlockedOn.load(std::memory_order_relaxed);
    if (Epoch % 2 == 0 || !On || !inEntryQueue(T, *On))
      continue;
    // A handoff writes the heir into the owner word before waking it: a
    // thread "blocked" on a monitor it owns is in fact done waiting.
    jitlock_thread *Holder = holderOf(*On);
    if (Holder == &T)
      continue;
    Edges.push_back({&T, Epoch, On, Holder});
  }
  auto EdgeOf = [&](jitlock_thread *T) -> BlockedEdge * {
    for (BlockedEdge &E : Edges)
      if (E.Thread == T)
        return &E;
    return nullptr;
  };
  // Each blocked thread waits for one holder, so the graph has out-degree at
  // most one: walk from each thread and report a cycle from its member with
  // the smallest id, so each cycle is reported once.
  for (BlockedEdge &Start : Edges) {
    std::vector<BlockedEdge *> Path;
    BlockedEdge *Cur = &Start;
    while (Cur && std::find(Path.begin(), Path.end(), Cur) == Path.end()) {
      Path.push_back(Cur);
      Cur = EdgeOf(Cur->Holder);
    }
    if (Cur != &Start)
      continue;
    bool Smallest = std::all_of(Path.begin(), Path.end(), [&](BlockedEdge *E) {
      return E->Thread->Id >= Start.Thread->Id;
    });
    if (!Smallest)
      continue;
    // Second read: confirm that every member stayed blocked on the same
    // monitor throughout (same odd epoch) and that the owners did not move.
    // A blocked thread releases nothing, so the cycle was real then.
    bool Stable = std::all_of(Path.begin(), Path.end(), [&](BlockedEdge *E) {
      return E->Thread->BlockEpoch.load(std::memory_order_acquire) ==
                 E->Epoch &&
             E->Thread->BlockedOn.load(std::memory_order_relaxed) == E->On &&
             inEntryQueue(*E->Thread, *E->On) && holderOf(*E->On) == E->Holder;
    });
    if (!Stable)
      continue;
    Found.emplace_back();
    for (BlockedEdge *E : Path) {
      Found.back().Threads.push_back(E->Thread);
      Found.back().Objs.push_back(E->On->Object);
    }
  }
  detail::unlockThreadRegistry();
  // Called without the registry lock, so the callback may query the runtime.
  // The threads stay attached: a deadlocked thread cannot detach.
  if (Fn)
    for (Cycle &C : Found)
      Fn(Ctx, C.Threads.size(), C.Threads.data(), C.Objs.data());
  return Found.size();
}

//===----------------------------------------------------------------------===//
// GC roots
//===----------------------------------------------------------------------===//

/// Set on the calling thread while root callbacks run.
static thread_local bool VisitingRoots = false;

bool jitlock::takeAbandonedRootVisit() {
  bool Abandoned = VisitingRoots;
  VisitingRoots = false;
  return Abandoned;
}

void jitlock_rt_enumerate_roots(jitlock_root_fn Fn, void *Ctx) {
  if (!Fn)
    return;
  SafepointScope Stopped;
  if (Stopped.refused()) {
    misuse(JITLOCK_ESTATE, nullptr, nullptr,
           "root enumeration from inside a handshake");
    return;
  }
  VisitingRoots = true;
  forEachThread([&](jitlock_thread &T) {
    LockStack LS(T);
    for (unsigned I = 0, E = LS.size(); I != E; ++I)
      Fn(Ctx, &T.LockStackSlots[I], JITLOCK_ROOT_LOCK_STACK, &T);
  });
  // `Fn` runs outside the monitor registry's lock: a stack overflow inside
  // it abandons these frames, and recovery (jitlock_rt_call_guarded)
  // releases the safepoint they hold but no lock taken here. The monitors
  // are collected first; inside the safepoint none is freed or registered:
  // deflation holds the operation lock, and only stopped threads inflate.
  // The buffer is static, guarded by the safepoint, so that an abandoned
  // call leaks nothing.
  static std::vector<Monitor *> Monitors;
  Monitors.clear();
  forEachMonitor([](Monitor &M) { Monitors.push_back(&M); });
  for (size_t I = 0; I < Monitors.size(); ++I)
    Fn(Ctx, &Monitors[I]->Object, JITLOCK_ROOT_MONITOR,
       owner::threadOf(Monitors[I]->ownerRaw()));
  VisitingRoots = false;
  // The table is keyed by object address: a moving collector moved keys.
  if (storage::isTable())
    storage::followMovedObjects();
}

uint64_t jitlock_rt_peek_hash(const void *Obj) {
  return Obj ? peekHash(Obj) : 0;
}
