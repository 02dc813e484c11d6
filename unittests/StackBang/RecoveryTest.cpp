//===- RecoveryTest.cpp - Overflows where recovery must clean up more -----===//
//
// A stack overflow may abandon frames that are not the guarded code's own:
// a user callback the runtime runs (a root enumeration's, the misuse
// handler), or an inflated exit between its release (N3) and its
// exit_queued call. Recovery must leave no runtime lock held and no queued
// thread stranded. A phase that hangs (the bug: a lock the abandoned frames
// held) ends the process through a watchdog, with the phase's name.
//
//===----------------------------------------------------------------------===//
#include "Recursion.h"
#include "StackBangTestUtil.h"

#include "../Runtime/Watchdog.h"

#include <chrono>

using namespace stackbang_test;
using jitlock_test::Watchdog;

namespace {

constexpr std::chrono::seconds kPhaseLimit{30};

void onStuck(const std::string &Phase) {
  fprintf(stderr, "stuck in phase: %s\n", Phase.c_str());
  fflush(stderr);
}

/// What a callback that overflows does: native code with no stack check,
/// which calls nothing of the runtime, as the callbacks' rules ask.
void overflowNatively() { nativeRecurse(0, ~0u); }

/// Whether another thread can take the thread registry now: it attaches,
/// locks a fresh object through a monitor and detaches.
void anotherThreadLocks(Obj *O) {
  runOnThread(kStackSize, [O] {
    jitlock_thread *T = jitlock_rt_attach();
    ASSERT_NE(T, nullptr);
    inflate(T, O);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

//===----------------------------------------------------------------------===//
// Root enumeration callbacks
//===----------------------------------------------------------------------===//

struct RootOverflow {
  jitlock_thread *Self;
  uint32_t Kind; // the root kind whose callback overflows
  unsigned Calls = 0;
  static void root(void *Ctx, void **, uint32_t Kind, jitlock_thread *) {
    auto *R = static_cast<RootOverflow *>(Ctx);
    if (Kind != R->Kind)
      return;
    ++R->Calls;
    overflowNatively();
  }
  static void run(void *Ctx) {
    jitlock_rt_enumerate_roots(&root, Ctx);
    ADD_FAILURE() << "the callback returned";
  }
};

struct RootCount {
  size_t LockStack = 0, Monitor = 0;
  static void root(void *Ctx, void **, uint32_t Kind, jitlock_thread *) {
    auto *C = static_cast<RootCount *>(Ctx);
    ++(Kind == JITLOCK_ROOT_MONITOR ? C->Monitor : C->LockStack);
  }
};

TEST_F(StackBangTest, OverflowInARootCallbackLeavesNoLockHeld) {
  Obj *Fast = newObj(), *Inflated = newObj();
  std::vector<Obj *> Later = newObjs(5);
  runOnThread(kStackSize, [&] {
    Watchdog W(kPhaseLimit, "attach", onStuck);
    jitlock_thread *Self = jitlock_rt_attach();
    inflate(Self, Inflated);
    // Held before the guarded call: a lock stack root the call keeps.
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, Fast), JITLOCK_OK);
    unsigned Round = 0;
    for (uint32_t Kind : {JITLOCK_ROOT_MONITOR, JITLOCK_ROOT_LOCK_STACK}) {
      SCOPED_TRACE("the callback overflows on root kind " +
                   std::to_string(Kind));
      W.phase("guarded root enumeration, kind " + std::to_string(Kind));
      RootOverflow R{Self, Kind};
      jitlock_guarded_result Result{};
      ASSERT_EQ(jitlock_rt_call_guarded(Self, &RootOverflow::run, &R, &Result),
                JITLOCK_ESTACK_OVERFLOW);
      EXPECT_EQ(R.Calls, 1u);
      EXPECT_EQ(Result.overflow.from_signal, 1u);
      EXPECT_EQ(Result.released_count, 0u);
      // The safepoint is over and the caller runs managed code again.
      EXPECT_EQ(jitlock_rt_in_safepoint(), 0);
      EXPECT_EQ(jitlock_rt_thread_state(Self), int(JITLOCK_THREAD_MANAGED));
      EXPECT_EQ(ownerOf(Fast), Self);
      expectZonesProtected(stackInfo(Self));

      // Everything the enumeration locked is free again: the monitor
      // registry (another enumeration, another inflation), the thread
      // registry and the operation lock (another thread's safepoint).
      W.phase("after the overflow, kind " + std::to_string(Kind));
      RootCount C;
      jitlock_rt_enumerate_roots(&RootCount::root, &C);
      EXPECT_EQ(C.LockStack, 1u);
      EXPECT_GE(C.Monitor, 1u);
      inflate(Self, Later[Round++]);
      anotherThreadLocks(Later[Round++]);
    }
    // Inside the caller's own safepoint, which the overflow leaves held.
    W.phase("guarded root enumeration inside the caller's safepoint");
    ASSERT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    RootOverflow R{Self, JITLOCK_ROOT_MONITOR};
    EXPECT_EQ(jitlock_rt_call_guarded(Self, &RootOverflow::run, &R, nullptr),
              JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(jitlock_rt_in_safepoint(), 1);
    EXPECT_EQ(jitlock_rt_thread_state(Self), int(JITLOCK_THREAD_NATIVE));
    RootCount C;
    jitlock_rt_enumerate_roots(&RootCount::root, &C);
    EXPECT_EQ(C.LockStack, 1u);
    EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_leave_native(Self), JITLOCK_OK);
    W.phase("after the overflow inside the caller's safepoint");
    anotherThreadLocks(Later[Round++]);

    ASSERT_EQ(jitlock_rt_monitor_exit(Self, Fast), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

/// Moves monitor roots, as a moving collector does, and overflows right
/// after the first move.
struct MoveThenOverflow {
  std::vector<std::pair<Obj *, Obj *>> To; // old copy, new copy
  Obj *First = nullptr;
  static void root(void *Ctx, void **Slot, uint32_t Kind, jitlock_thread *) {
    auto *M = static_cast<MoveThenOverflow *>(Ctx);
    if (Kind != JITLOCK_ROOT_MONITOR)
      return;
    for (auto [From, Copy] : M->To)
      if (*Slot == From) {
        Copy->header.store(From->header.load());
        From->header.store(kUnlocked);
        *Slot = Copy;
        M->First = From;
        overflowNatively();
      }
  }
  static void run(void *Ctx) {
    jitlock_rt_enumerate_roots(&root, Ctx);
    ADD_FAILURE() << "the callback returned";
  }
};

TEST_F(StackBangTest, OverflowInARootCallbackKeepsMovedObjectsLockable) {
  // Table storage keys its monitors by object address: the objects moved
  // before the overflow must be found at their new addresses.
  for (uint32_t Storage : {JITLOCK_MONITORS_POINTER, JITLOCK_MONITORS_INDEX,
                           JITLOCK_MONITORS_TABLE}) {
    SCOPED_TRACE("monitor storage " + std::to_string(Storage));
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.monitor_storage = Storage;
    ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
    Obj *A = newObj(), *B = newObj(), *A2 = newObj(), *B2 = newObj();
    MoveThenOverflow Mover;
    Mover.To = {{A, A2}, {B, B2}};
    runOnThread(kStackSize, [&] {
      Watchdog W(kPhaseLimit, "attach", onStuck);
      jitlock_thread *Self = jitlock_rt_attach();
      inflate(Self, A);
      inflate(Self, B);
      ASSERT_EQ(jitlock_rt_monitor_enter(Self, A), JITLOCK_OK);
      W.phase("overflow after a move, storage " + std::to_string(Storage));
      ASSERT_EQ(jitlock_rt_call_guarded(Self, &MoveThenOverflow::run, &Mover,
                                        nullptr),
                JITLOCK_ESTACK_OVERFLOW);
      ASSERT_NE(Mover.First, nullptr);
      Obj *CurA = Mover.First == A ? A2 : A;
      Obj *CurB = Mover.First == B ? B2 : B;
      W.phase("locking after the overflow, storage " + std::to_string(Storage));
      EXPECT_EQ(ownerOf(CurA), Self);
      EXPECT_EQ(jitlock_rt_monitor_exit(Self, CurA), JITLOCK_OK);
      anotherThreadLocks(CurA);
      anotherThreadLocks(CurB);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    EXPECT_EQ(Mover.First->header.load(), kUnlocked)
        << "shutdown wrote to the dead copy";
  }
}

//===----------------------------------------------------------------------===//
// The misuse handler
//===----------------------------------------------------------------------===//

/// Set on the thread whose misuse handler is to overflow.
thread_local bool OverflowInHandler = false;
thread_local unsigned HandlerCalls = 0;

void overflowingHandler(void *, jitlock_status, jitlock_thread *, void *,
                        const char *) {
  if (!OverflowInHandler)
    return;
  ++HandlerCalls;
  OverflowInHandler = false;
  overflowNatively();
}

/// One misuse whose report may come while the runtime holds a lock, and a
/// check that whatever it held is free again.
struct MisuseCase {
  const char *Name;
  std::function<void()> Before;
  std::function<int()> Misuse;
  std::function<void()> After;
};

struct MisuseCall {
  const MisuseCase *Case;
  int Rc = -1;
  static void run(void *Ctx) {
    auto *C = static_cast<MisuseCall *>(Ctx);
    OverflowInHandler = true;
    C->Rc = C->Case->Misuse();
    OverflowInHandler = false;
  }
};

/// A handshake operation that counts its runs (when given a counter).
void countHandshake(void *Runs, jitlock_thread *) {
  if (Runs)
    static_cast<std::atomic<unsigned> *>(Runs)->fetch_add(1);
}

TEST_F(StackBangTest, OverflowInTheMisuseHandlerLeavesNoLockHeld) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = &overflowingHandler;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  // A period so long that the thread only waits to be stopped.
  jitlock_deflation_policy Policy;
  jitlock_rt_default_deflation_policy(&Policy);
  Policy.period_ms = 3600 * 1000;
  Policy.idle_threshold = 0;
  std::vector<Obj *> Objs = newObjs(16);
  size_t NextObj = 0;
  // A handle no attached thread has; the runtime only compares it.
  alignas(64) static char NotAThread[64];
  auto *NotAttached = reinterpret_cast<jitlock_thread *>(NotAThread);
  auto ThreadRegistryFree = [&] {
    jitlock_rt_stats S;
    jitlock_rt_get_stats(&S);
    anotherThreadLocks(Objs[NextObj++]);
  };
  const MisuseCase Cases[] = {
      {"configure while attached (thread registry)", nullptr,
       [&] { return jitlock_rt_configure(&Cfg); }, ThreadRegistryFree},
      {"shutdown while attached (thread registry)", nullptr,
       [] { return jitlock_rt_shutdown(); }, ThreadRegistryFree},
      {"stop the deflation thread, not running (its control lock)", nullptr,
       [] { return jitlock_rt_stop_deflation(); },
       [&] {
         EXPECT_EQ(jitlock_rt_start_deflation(&Policy), JITLOCK_OK);
         EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
       }},
      {"start the deflation thread, running (its control lock)",
       [&] { EXPECT_EQ(jitlock_rt_start_deflation(&Policy), JITLOCK_OK); },
       [&] { return jitlock_rt_start_deflation(&Policy); },
       [] { EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK); }},
      {"handshake with a thread that is not attached (operation lock)", nullptr,
       [&] {
         return jitlock_rt_handshake(NotAttached, &countHandshake, nullptr);
       },
       [&] {
         // Neither the operation lock nor the busy scope stayed held: a
         // handshake from this thread and one from another still run.
         std::atomic<unsigned> Runs{0};
         EXPECT_EQ(jitlock_rt_handshake_all(&countHandshake, &Runs),
                   JITLOCK_OK);
         EXPECT_GE(Runs.load(), 1u);
         ThreadRegistryFree();
       }},
      {"exit by a non-owner (no lock)", nullptr,
       [&] { return jitlock_rt_monitor_exit(jitlock_rt_current(), Objs[15]); },
       ThreadRegistryFree},
  };
  runOnThread(kStackSize, [&] {
    Watchdog W(kPhaseLimit, "attach", onStuck);
    jitlock_thread *Self = jitlock_rt_attach();
    for (const MisuseCase &Case : Cases) {
      SCOPED_TRACE(Case.Name);
      W.phase(std::string("before: ") + Case.Name);
      if (Case.Before)
        Case.Before();
      W.phase(std::string("overflow: ") + Case.Name);
      HandlerCalls = 0;
      MisuseCall Call{&Case};
      jitlock_guarded_result Result{};
      EXPECT_EQ(jitlock_rt_call_guarded(Self, &MisuseCall::run, &Call, &Result),
                JITLOCK_ESTACK_OVERFLOW);
      EXPECT_EQ(HandlerCalls, 1u);
      EXPECT_EQ(Call.Rc, -1) << "the misuse returned: the handler did not "
                                "overflow";
      EXPECT_EQ(Result.overflow.from_signal, 1u);
      W.phase(std::string("after: ") + Case.Name);
      Case.After();
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

//===----------------------------------------------------------------------===//
// An overflow between an inflated exit's release and its exit_queued call
//===----------------------------------------------------------------------===//

/// Inside the guarded call: enters the inflated `O`, lets the contenders
/// go, waits until they all sleep in its entry queue, releases `O` as N3
/// does (which finds them queued) and overflows before exit_queued, as code
/// without a stack check, or the glue frame of the call, would.
struct ReleaseThenOverflow {
  jitlock_thread *Self;
  Obj *O;
  const std::vector<jitlock_thread *> *Queued;
  std::atomic<bool> *Go;
  bool allAsleep(jitlock_lock_info &I) const {
    jitlock_rt_inspect(O, &I);
    if (I.entry_queued < Queued->size())
      return false;
    for (jitlock_thread *T : *Queued)
      if (jitlock_rt_thread_state(T) != int(JITLOCK_THREAD_BLOCKED))
        return false;
    return true;
  }
  static void run(void *Ctx) {
    auto *R = static_cast<ReleaseThenOverflow *>(Ctx);
    ASSERT_EQ(jitlock_rt_monitor_enter(R->Self, R->O), JITLOCK_OK);
    R->Go->store(true);
    jitlock_lock_info I{};
    auto End = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!R->allAsleep(I)) {
      ASSERT_LT(std::chrono::steady_clock::now(), End)
          << "the contenders never slept in the entry queue";
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_EQ(I.owner, R->Self);
    ASSERT_EQ(I.holds, 1u);
    // N3's release store, on the monitor pointer storage names.
    uint64_t H = R->O->header.load(std::memory_order_relaxed);
    ASSERT_EQ(H & 3, layout().monitor_value);
    auto *Owner = reinterpret_cast<std::atomic<uintptr_t> *>(
        H - layout().monitor_value + layout().monitor_owner_offset);
    Owner->store(0, std::memory_order_release);
    jitlock_rt_stack_bang(R->Self, stackInfo(R->Self).safe_limit);
    ADD_FAILURE() << "no overflow";
  }
};

TEST_F(StackBangTest, OverflowAfterAnInflatedReleaseWakesTheQueue) {
  constexpr unsigned kRounds = 10, kContenders = 3;
  Obj *O = newObj();
  runOnThread(kStackSize, [&] {
    Watchdog W(kPhaseLimit, "attach", onStuck);
    jitlock_thread *Self = jitlock_rt_attach();
    inflate(Self, O);
    for (unsigned Round = 0; Round < kRounds; ++Round) {
      SCOPED_TRACE("round " + std::to_string(Round));
      W.phase("round " + std::to_string(Round));
      std::atomic<bool> Go{false};
      std::atomic<unsigned> Attached{0}, Done{0};
      std::vector<jitlock_thread *> Queued(kContenders);
      std::vector<std::thread> Contenders;
      for (unsigned I = 0; I < kContenders; ++I)
        Contenders.emplace_back([&, I] {
          jitlock_thread *T = jitlock_rt_attach();
          Queued[I] = T;
          Attached.fetch_add(1);
          while (!Go.load())
            std::this_thread::yield();
          EXPECT_EQ(jitlock_rt_monitor_enter(T, O), JITLOCK_OK);
          O->payload += 1; // under the lock: not atomic
          EXPECT_EQ(jitlock_rt_monitor_exit(T, O), JITLOCK_OK);
          EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
          Done.fetch_add(1);
        });
      while (Attached.load() != kContenders)
        std::this_thread::yield();
      uint64_t Before = O->payload;
      ReleaseThenOverflow R{Self, O, &Queued, &Go};
      jitlock_guarded_result Result{};
      EXPECT_EQ(
          jitlock_rt_call_guarded(Self, &ReleaseThenOverflow::run, &R, &Result),
          JITLOCK_ESTACK_OVERFLOW);
      EXPECT_EQ(Result.released_count, 0u) << "N3 released the only hold";
      // Each contender gets the monitor in turn, although nobody ran the
      // XQ the abandoned exit owed its queue.
      auto End = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (Done.load() != kContenders &&
             std::chrono::steady_clock::now() < End)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(Done.load(), kContenders)
          << "queued threads stranded after the overflow";
      // Run that XQ by hand, to finish the round anyway.
      while (Done.load() != kContenders) {
        jitlock_rt_monitor_exit_queued_slow(Self, O);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      for (std::thread &T : Contenders)
        T.join();
      EXPECT_EQ(O->payload, Before + kContenders);
      EXPECT_EQ(ownerOf(O), nullptr);
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

} // namespace
