//===- StackRecovery.cpp - Guarded calls and the release of abandoned locks
//===//
//
// jitlock_rt_call_guarded records the holds its thread has on entry and
// pushes a GuardedCall on the thread's chain; the default overflow handler
// (jitlock_rt_unwind_to_entry) longjmps to the innermost one, which gives
// the thread its state back, releases every hold taken since the entry,
// innermost first as far as that is known, through the normal exit (so
// that waiters get the monitors), and returns JITLOCK_ESTACK_OVERFLOW. See
// docs/stack-banging.md.
//
//===----------------------------------------------------------------------===//
#include "StackGuard.h"

#include "Monitor.h"
#include "MonitorStorage.h"
#include "Safepoint.h"
#include "Synchronizer.h"

#include <algorithm>
#include <csignal>
#include <vector>

#include <pthread.h>
#include <setjmp.h>

using namespace jitlock;

namespace jitlock {

/// How many holds a thread has on one object.
struct HoldCount {
  void *Obj;
  uint64_t Count;
};

/// One active jitlock_rt_call_guarded, in its own frame. The chain runs from
/// the innermost (StackState::Innermost) outwards.
struct GuardedCall {
  sigjmp_buf Env;
  GuardedCall *Outer = nullptr;
  /// Filled by the unwinder before it jumps here.
  jitlock_stack_overflow Overflow{};
  /// Every hold the thread had on entry, one row per object, by object.
  std::vector<HoldCount> Before;
};

} // namespace jitlock

//===----------------------------------------------------------------------===//
// Lock holds, for recovery
//===----------------------------------------------------------------------===//

/// Every hold `T` has, one row per object, sorted by object: lock stack
/// entries and monitors it owns (recursions + 1). `MonitorObjs`, if given,
/// gets the monitors' objects in registry order.
static void collectHolds(jitlock_thread &T, std::vector<HoldCount> &Out,
                         std::vector<void *> *MonitorObjs) {
  Out.clear();
  LockStack LS(T);
  for (unsigned I = 0, E = LS.size(); I != E; ++I)
    Out.push_back({LS.at(int(I)), 1});
  // No monitor at all is the common case; skip the registry lock then. A
  // monitor T owns was registered before T acquired it, so it is counted.
  if (monitorsAlive() != 0)
    forEachMonitor([&](Monitor &M) {
      if (!M.isOwnedBy(T))
        return;
      Out.push_back({M.Object, M.recursions() + 1});
      if (MonitorObjs)
        MonitorObjs->push_back(M.Object);
    });
  if (Out.size() < 2)
    return;
  std::sort(Out.begin(), Out.end(), [](const HoldCount &A, const HoldCount &B) {
    return A.Obj < B.Obj;
  });
  size_t Kept = 0;
  for (const HoldCount &H : Out) {
    if (Kept && Out[Kept - 1].Obj == H.Obj)
      Out[Kept - 1].Count += H.Count;
    else
      Out[Kept++] = H;
  }
  Out.resize(Kept);
}

/// Releases every hold `T` has beyond `Before`, innermost first as far as
/// that is known: the lock stack top-down, then monitors. Returns how many.
static size_t releaseHoldsSince(jitlock_thread &T,
                                const std::vector<HoldCount> &Before,
                                jitlock_guarded_result *R) {
  std::vector<HoldCount> Now, Excess;
  std::vector<void *> MonitorObjs;
  collectHolds(T, Now, &MonitorObjs);
  // Both sorted by object: a merge. An object fn released from before the
  // call is not taken again (it cannot be, without blocking).
  auto B = Before.begin();
  for (const HoldCount &H : Now) {
    while (B != Before.end() && B->Obj < H.Obj)
      ++B;
    uint64_t Had = B != Before.end() && B->Obj == H.Obj ? B->Count : 0;
    if (H.Count > Had)
      Excess.push_back({H.Obj, H.Count - Had});
  }
  auto Left = [&](void *Obj) -> uint64_t * {
    auto It =
        std::lower_bound(Excess.begin(), Excess.end(), Obj,
                         [](const HoldCount &H, void *O) { return H.Obj < O; });
    return It != Excess.end() && It->Obj == Obj ? &It->Count : nullptr;
  };
  size_t Released = 0;
  // Through the normal exit, which hands monitors to their waiters.
  auto Release = [&](void *Obj) {
    if (jitlock_rt_monitor_exit(&T, Obj) != JITLOCK_OK)
      return false;
    if (R && R->released && Released < R->released_cap)
      R->released[Released] = Obj;
    ++Released;
    return true;
  };

  // The lock stack, top-down. An exit may reshape it (fixing an anonymous
  // owner moves all of an object's entries into its monitor): scan again.
  for (;;) {
    LockStack LS(T);
    void *Pick = nullptr;
    uint64_t *Count = nullptr;
    for (int I = int(LS.size()) - 1; I >= 0 && !Pick; --I) {
      uint64_t *C = Left(LS.at(I));
      if (C && *C) {
        Pick = LS.at(I);
        Count = C;
      }
    }
    if (!Pick || !Release(Pick))
      break;
    --*Count;
  }
  // Monitors, newest registered first, then anything the lock stack phase
  // moved into a monitor.
  for (void *Obj : MonitorObjs)
    for (uint64_t *C = Left(Obj); C && *C && Release(Obj);)
      --*C;
  for (HoldCount &H : Excess)
    while (H.Count && Release(H.Obj))
      --H.Count;
  return Released;
}

/// XR: the XQ an exit abandoned between N3 and its exit_queued call owed,
/// run for every free monitor with threads queued.
static void wakeAbandonedQueues() {
#ifdef JITLOCK_MUTATE_XR // scripts/mutate.sh
  return;
#endif
  // The exit barrier the abandoned N3 did not reach.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (monitorsAlive() == 0)
    return;
  // Under the registry lock, which keeps each monitor registered, hence not
  // reused, while XQ reads it; a deflater's sweep runs XQ there too.
  forEachMonitor([](Monitor &M) {
    if (M.entryCount() != 0 && M.ownerRaw() == 0)
      wakeSuccessor(M);
  });
}

/// The landing of an overflow in jitlock_rt_call_guarded's frame.
static int recover(jitlock_thread &T, GuardedCall &C,
                   jitlock_guarded_result *R) {
  StackState &S = T.Stack;
  S.Innermost.store(C.Outer, std::memory_order_relaxed);
  if (C.Overflow.from_signal) {
    // We left the handler by siglongjmp without restoring the signal mask.
    sigset_t Set;
    sigemptyset(&Set);
    sigaddset(&Set, SIGSEGV);
    pthread_sigmask(SIG_UNBLOCK, &Set, nullptr);
  }
  reprotect(S);
  size_t Released = releaseHoldsSince(T, C.Before, R);
  wakeAbandonedQueues();
  if (R) {
    R->overflow = C.Overflow;
    R->released_count = Released;
  }
  return JITLOCK_ESTACK_OVERFLOW;
}

void jitlock_rt_unwind_to_entry(void *Ctx, const jitlock_stack_overflow *Info) {
  jitlock_thread &T = currentThreadStorage();
  jitlock_stack_overflow Local{};
  if (!Info) {
    Local.thread = T.Attached ? &T : nullptr;
    Local.sp = currentSp();
    if (T.Attached)
      fillStackInfo(T, Local.stack);
    Info = &Local;
  }
  GuardedCall *C =
      T.Attached ? T.Stack.Innermost.load(std::memory_order_relaxed) : nullptr;
  if (!C)
    fatalOverflow(*Info, ": no guarded call to return to");
  C->Overflow = *Info;
  siglongjmp(C->Env, 1);
}

int jitlock_rt_call_guarded(jitlock_thread *Self, void (*Fn)(void *), void *Arg,
                            jitlock_guarded_result *Result) {
  if (!Self || Self != currentThread())
    return misuse(JITLOCK_ENOT_ATTACHED, Self, nullptr,
                  "guarded call on a thread that is not the caller's "
                  "attached thread");
  if (!Fn)
    return misuse(JITLOCK_EINVAL, Self, nullptr, "guarded call of null");
  if (Result) {
    Result->overflow = jitlock_stack_overflow{};
    Result->released_count = 0;
  }
  StackState &S = Self->Stack;
  GuardedCall C;
  C.Outer = S.Innermost.load(std::memory_order_relaxed);
  // An entry below this frame was abandoned by a handler that unwound past
  // its guarded call; its frame (and its link outwards) may be overwritten.
  if (reinterpret_cast<uintptr_t>(C.Outer) < reinterpret_cast<uintptr_t>(&C))
    C.Outer = nullptr;
  reprotect(S);
  collectHolds(*Self, C.Before, nullptr);
  // Pops the entry however the call ends: return, overflow, or an exception.
  struct PopOnExit {
    StackState &S;
    GuardedCall &C;
    ~PopOnExit() { S.Innermost.store(C.Outer, std::memory_order_relaxed); }
  } Pop{S, C};
  S.Innermost.store(&C, std::memory_order_relaxed);
  // The handler reads Innermost from a signal on this thread.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // An overflow may abandon frames in any thread state (a runtime call,
  // native code the entry point made); the caller gets its own state back.
  const uint32_t EntryState = Self->State.load(std::memory_order_relaxed);
  const OperationMarks EntryOperations = operationMarks();
  if (sigsetjmp(C.Env, 0) == 0) {
    Fn(Arg);
    return JITLOCK_OK;
  }
  // A root enumeration abandoned in its callbacks: what they moved so far
  // keeps its monitor roots, and table storage follows them, still inside
  // the enumeration's safepoint (released just below if the call took it).
  if (takeAbandonedRootVisit() && holdsSafepoint() && storage::isTable())
    storage::followMovedObjects();
  unwindOperations(EntryOperations);
  restoreThreadState(*Self, EntryState);
  return recover(*Self, C, Result);
}
