//===- MovingCollectorTest.cpp - Locks across a moving collection ---------===//
//
// A moving collector stops every thread, moves objects through the roots
// jitlock_rt_enumerate_roots gives it (lock stack slots, monitor objects)
// and leaves a dead copy behind whose header reads unlocked. A thread that
// slept in the runtime for an object (parked to enter it, spinning until
// the safepoint stopped it, waiting, notified, timing out) must come back
// holding the object at its new address, and the lock must stay exclusive.
// CTest runs this suite under each monitor storage.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <random>

using namespace jitlock_test;

namespace {

/// The collector's side: a heap of test objects that only grows, so that
/// every address stays valid, and the move of one object.
class Heap {
public:
  Obj *allocate(uint64_t Header = kUnlockedHeader) {
    std::lock_guard<std::mutex> G(Mu);
    return &Objects.emplace_back(Header);
  }

  struct Move {
    Obj *From = nullptr, *To = nullptr;
    unsigned LockStackRoots = 0, MonitorRoots = 0;
  };

  /// Moves the object `Handle` refers to, as a collector does: inside a
  /// safepoint of its own it rewrites every root that holds the object,
  /// copies the object, gives the dead copy an unlocked header and updates
  /// the handle (the mutators' reference) before the threads run again.
  /// The caller is not attached, or attached and managed.
  Move move(std::atomic<Obj *> &Handle) {
    jitlock_thread *Self = jitlock_rt_current();
    if (Self)
      EXPECT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);
    Move M;
    M.To = allocate(0);
    EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    M.From = Handle.load(std::memory_order_relaxed);
    jitlock_rt_enumerate_roots(&root, &M);
    M.To->header.store(M.From->hdr(), std::memory_order_relaxed);
    M.To->payload = M.From->payload;
    M.From->header.store(kUnlocked, std::memory_order_relaxed);
    Handle.store(M.To, std::memory_order_release);
    EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    if (Self)
      EXPECT_EQ(jitlock_rt_leave_native(Self), JITLOCK_OK);
    return M;
  }

private:
  static void root(void *Ctx, void **Slot, uint32_t Kind, jitlock_thread *) {
    auto *M = static_cast<Move *>(Ctx);
    if (*Slot != M->From)
      return;
    *Slot = M->To;
    ++(Kind == JITLOCK_ROOT_MONITOR ? M->MonitorRoots : M->LockStackRoots);
  }

  std::mutex Mu;
  std::deque<Obj> Objects;
};

/// How the first thread holds the object when the second one comes.
enum class Hold { Fast, Monitor };

class MovingCollectorTest : public RuntimeTest {
protected:
  void withSpinLimit(uint32_t Limit) {
    jitlock_rt_config Cfg;
    jitlock_rt_default_config(&Cfg);
    Cfg.spin_limit = Limit;
    reconfigure(Cfg);
  }

  /// Waits until `T` sleeps in the runtime with `C` showing at least
  /// `Queued` threads in its entry queue and `Waiting` in its wait set.
  bool sleeps(jitlock_thread *T, const Obj *C, uint64_t Queued,
              uint64_t Waiting) {
    return waitUntil([&] {
      jitlock_lock_info I = inspect(C);
      return I.entry_queued >= Queued && I.waiting >= Waiting &&
             jitlock_rt_thread_state(T) == int(JITLOCK_THREAD_BLOCKED);
    });
  }

  /// What `W`, which entered `C` before `C` moved, sees: it holds `C` (the
  /// new copy) exactly once, through whatever the runtime keeps, and exits
  /// it; the dead copy was never locked.
  void expectHeldAndExit(Worker &W, Obj *C, Obj *Dead) {
    W.call([&] {
      jitlock_thread *T = W.thread();
      EXPECT_EQ(jitlock_rt_holds_lock(T, C), 1) << describe(C);
      EXPECT_EQ(jitlock_rt_owner_of(C), T);
      EXPECT_EQ(inspect(C).holds, 1u);
      EXPECT_EQ(jitlock_rt_monitor_exit(T, C), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_holds_lock(T, C), 0);
      EXPECT_EQ(lockStack(T), std::vector<void *>{});
    });
    EXPECT_EQ(Dead->hdr(), kUnlocked) << "the dead copy was locked";
    EXPECT_EQ(jitlock_rt_owner_of(C), nullptr);
  }

  /// T2 holds C (`How`); T3 enters C and sleeps (parked, or spinning while
  /// T2 runs until the collector's safepoint stops it); C moves to C';
  /// T2 exits C'. T3's enter must return owning C', not the dead copy.
  void enterAcrossAMove(Hold How, bool OwnerRuns) {
    SCOPED_TRACE(std::string(How == Hold::Fast ? "fast-locked" : "monitor") +
                 (OwnerRuns ? ", owner running" : ", owner stopped"));
    std::atomic<Obj *> Handle{TheHeap.allocate()};
    Obj *C = Handle.load();
    Worker T2, T3;
    std::atomic<bool> Release{false};
    // T2 takes C; running, it polls until told to exit, re-reading its
    // reference after each poll as compiled code's frames would be updated.
    T2.call([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(T2.thread(), C), JITLOCK_OK);
      if (How == Hold::Monitor)
        EXPECT_EQ(jitlock_rt_wait_timed(T2.thread(), C, 0), JITLOCK_ETIMEDOUT);
    });
    jitlock_rt_layout L;
    jitlock_rt_get_layout(&L);
    if (OwnerRuns)
      T2.post([&] {
        while (!Release.load())
          pollAsCompiledCode(T2.thread(), L);
        EXPECT_EQ(jitlock_rt_monitor_exit(T2.thread(), Handle.load()),
                  JITLOCK_OK);
      });
    int EnterRc = -1;
    const uint64_t Contended = stats().contended_enters;
    // The reference is loaded after the worker's last stop, as compiled
    // code would load it.
    T3.post([&] {
      EnterRc = jitlock_rt_monitor_enter(T3.thread(), Handle.load());
    });
    // Counted as a contender: spinning, or parked once its budget ran out.
    if (OwnerRuns)
      ASSERT_TRUE(
          waitUntil([&] { return stats().contended_enters > Contended; }));
    else
      ASSERT_TRUE(sleeps(T3.thread(), C, 1, 0)) << describe(C);

    Heap::Move M = TheHeap.move(Handle);
    Obj *Moved = M.To;
    EXPECT_EQ(M.MonitorRoots, 1u);
    EXPECT_EQ(M.LockStackRoots, How == Hold::Fast ? 1u : 0u);
    EXPECT_FALSE(T3.finished()) << "entered while T2 holds it";
    if (OwnerRuns) {
      Release.store(true);
      ASSERT_TRUE(T2.join());
    } else {
      EXPECT_EQ(lockStack(T2.thread()), How == Hold::Fast
                                            ? std::vector<void *>{Moved}
                                            : std::vector<void *>{});
      T2.call([&] {
        EXPECT_EQ(jitlock_rt_monitor_exit(T2.thread(), Moved), JITLOCK_OK);
      });
    }
    ASSERT_TRUE(T3.join());
    EXPECT_EQ(EnterRc, JITLOCK_OK);
    expectHeldAndExit(T3, Moved, C);
  }

  Heap TheHeap;
};

TEST_F(MovingCollectorTest, ParkedEntererOwnsTheMovedObject) {
  withSpinLimit(0);
  enterAcrossAMove(Hold::Fast, /*OwnerRuns=*/false);
  enterAcrossAMove(Hold::Monitor, /*OwnerRuns=*/false);
}

TEST_F(MovingCollectorTest, ParkedEntererOwnsTheMovedObjectInHeavyMode) {
  // Every enter inflates (H1): the object is always held through a monitor.
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.spin_limit = 0;
  Cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
  reconfigure(Cfg);
  enterAcrossAMove(Hold::Monitor, /*OwnerRuns=*/false);
  enterAcrossAMove(Hold::Monitor, /*OwnerRuns=*/true);
}

TEST_F(MovingCollectorTest, SpinningEntererOwnsTheMovedObject) {
  // The owner runs, so the enterer spins (as long as its budget lasts),
  // until the collector's safepoint sends it to park.
  withSpinLimit(1u << 16);
  for (int Round = 0; Round < 4; ++Round) {
    enterAcrossAMove(Hold::Fast, /*OwnerRuns=*/true);
    enterAcrossAMove(Hold::Monitor, /*OwnerRuns=*/true);
  }
}

/// How a waiter's wait ends, relative to the move.
enum class WaitEnd {
  NotifiedAfter,  ///< waiting in the wait set during the move
  NotifiedBefore, ///< in the entry queue (notified) during the move
  TimesOut        ///< times out after the move
};

/// Restoring an elided frame whose objects move while it waits: D is free
/// and taken at once, C is held by T2 (`How`), so T3's restore parks for C;
/// both move; T2 exits C'. T3 must hold D' once and C' twice, at their new
/// addresses, with neither dead copy locked.
void restoreAcrossAMove(Heap &TheHeap, Hold How) {
  SCOPED_TRACE(How == Hold::Fast ? "fast-locked" : "monitor");
  std::atomic<Obj *> HandleC{TheHeap.allocate()}, HandleD{TheHeap.allocate()};
  Obj *C = HandleC.load(), *D = HandleD.load();
  Worker T2, T3;
  T2.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(T2.thread(), C), JITLOCK_OK);
    if (How == Hold::Monitor)
      EXPECT_EQ(jitlock_rt_wait_timed(T2.thread(), C, 0), JITLOCK_ETIMEDOUT);
  });
  const jitlock_relock_entry Entries[] = {{D, JITLOCK_RELOCK_ELIDED},
                                          {C, JITLOCK_RELOCK_ELIDED},
                                          {C, JITLOCK_RELOCK_ELIDED}};
  int RestoreRc = -1;
  T3.post([&] {
    RestoreRc = jitlock_rt_restore_locks(T3.thread(), Entries, 3, 0);
  });
  ASSERT_TRUE(waitUntil([&] {
    return inspect(C).entry_queued >= 1 &&
           jitlock_rt_thread_state(T3.thread()) == int(JITLOCK_THREAD_BLOCKED);
  })) << describe(C);
  Obj *MovedD = TheHeap.move(HandleD).To;
  Obj *MovedC = TheHeap.move(HandleC).To;
  EXPECT_FALSE(T3.finished()) << "restored while T2 holds C";
  T2.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(T2.thread(), MovedC), JITLOCK_OK);
  });
  ASSERT_TRUE(T3.join());
  EXPECT_EQ(RestoreRc, JITLOCK_OK);
  T3.call([&] {
    jitlock_thread *T = T3.thread();
    EXPECT_EQ(jitlock_rt_holds_lock(T, MovedD), 1) << describe(MovedD);
    EXPECT_EQ(jitlock_rt_holds_lock(T, MovedC), 1) << describe(MovedC);
    EXPECT_EQ(inspect(MovedD).holds, 1u);
    EXPECT_EQ(inspect(MovedC).holds, 2u);
    for (void *Slot : lockStack(T))
      EXPECT_TRUE(Slot == MovedC || Slot == MovedD)
          << "the restored lock stack names a dead copy";
    EXPECT_EQ(jitlock_rt_monitor_exit(T, MovedC), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(T, MovedC), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(T, MovedD), JITLOCK_OK);
    EXPECT_EQ(lockStack(T), std::vector<void *>{});
  });
  EXPECT_EQ(C->hdr(), kUnlocked) << "the dead copy of C was locked";
  EXPECT_EQ(D->hdr(), kUnlocked) << "the dead copy of D was locked";
  EXPECT_EQ(jitlock_rt_owner_of(MovedC), nullptr);
  EXPECT_EQ(jitlock_rt_owner_of(MovedD), nullptr);
}

TEST_F(MovingCollectorTest, RestoreThatParkedHoldsTheMovedObjects) {
  withSpinLimit(0);
  restoreAcrossAMove(TheHeap, Hold::Fast);
  restoreAcrossAMove(TheHeap, Hold::Monitor);
}

TEST_F(MovingCollectorTest, WaiterOwnsTheMovedObject) {
  for (WaitEnd End :
       {WaitEnd::NotifiedAfter, WaitEnd::NotifiedBefore, WaitEnd::TimesOut}) {
    SCOPED_TRACE("wait end " + std::to_string(int(End)));
    std::atomic<Obj *> Handle{TheHeap.allocate()};
    Obj *C = Handle.load();
    Worker Waiter, Other;
    int WaitRc = -1;
    // Entered twice: the wait gives both holds back.
    Waiter.call([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(Waiter.thread(), C), JITLOCK_OK);
    });
    Waiter.post([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(Waiter.thread(), C), JITLOCK_OK);
      WaitRc = End == WaitEnd::TimesOut
                   ? jitlock_rt_wait_timed(Waiter.thread(), C, 300000000)
                   : jitlock_rt_wait(Waiter.thread(), C);
    });
    ASSERT_TRUE(sleeps(Waiter.thread(), C, 0, 1));
    if (End == WaitEnd::NotifiedBefore)
      Other.call([&] {
        ASSERT_EQ(jitlock_rt_monitor_enter(Other.thread(), C), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_notify(Other.thread(), C), JITLOCK_OK);
      });
    Heap::Move M = TheHeap.move(Handle);
    Obj *Moved = M.To;
    EXPECT_EQ(M.MonitorRoots, 1u);
    if (End == WaitEnd::NotifiedAfter)
      Other.call([&] {
        ASSERT_EQ(jitlock_rt_monitor_enter(Other.thread(), Moved), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_notify(Other.thread(), Moved), JITLOCK_OK);
      });
    if (End != WaitEnd::TimesOut)
      Other.call([&] {
        EXPECT_EQ(jitlock_rt_monitor_exit(Other.thread(), Moved), JITLOCK_OK);
      });
    ASSERT_TRUE(Waiter.join());
    EXPECT_EQ(WaitRc,
              End == WaitEnd::TimesOut ? JITLOCK_ETIMEDOUT : JITLOCK_OK);
    Waiter.call([&] {
      EXPECT_EQ(jitlock_rt_monitor_exit(Waiter.thread(), Moved), JITLOCK_OK);
    });
    expectHeldAndExit(Waiter, Moved, C);
  }
}

/// Several threads lock one object over and over, with every kind of sleep
/// (contended enters, waits that time out or are notified), while a
/// collector keeps moving it. Each critical section increments a plain
/// counter across a poll (where the collector may stop the holder and move
/// the object), so a second holder would lose an increment; each thread
/// also checks that it holds the object its reference names.
TEST_F(MovingCollectorTest, MutualExclusionAcrossRepeatedMoves) {
  const uint64_t Seed =
      seedFromEnv("MovingCollectorTest.MutualExclusion", "JITLOCK_MOVING_SEED");
  const unsigned Threads = 4;
  const unsigned Iterations =
      unsigned(envU64("JITLOCK_MOVING_ITERATIONS", kSanitized ? 2000 : 10000));
  std::atomic<Obj *> Handle{TheHeap.allocate()};
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  uint64_t Counter = 0; // only under the lock
  std::atomic<unsigned> Finished{0};
  std::atomic<uint64_t> Failures{0}, Moves{0};

  std::vector<std::thread> Mutators;
  for (unsigned I = 0; I < Threads; ++I)
    Mutators.emplace_back([&, I] {
      jitlock_thread *T = jitlock_rt_attach();
      std::mt19937_64 Rng(Seed + I);
      auto Check = [&](bool Ok, const char *What) {
        if (!Ok && Failures.fetch_add(1) < 10)
          ADD_FAILURE() << "thread " << I << ": " << What;
      };
      for (unsigned N = 0; N < Iterations; ++N) {
        pollAsCompiledCode(T, L);
        unsigned Op = unsigned(Rng() % 8);
        Check(jitlock_rt_monitor_enter(T, Handle.load()) == JITLOCK_OK,
              "enter failed");
        // The reference after the call: the collector updated it if the
        // enter slept through a move.
        Obj *C = Handle.load();
        Check(jitlock_rt_holds_lock(T, C) == 1, "enter returned without "
                                                "holding the object");
        if (Op == 0) {
          Check(jitlock_rt_monitor_enter(T, C) == JITLOCK_OK, "re-enter");
          pollAsCompiledCode(T, L);
          C = Handle.load();
          Check(jitlock_rt_monitor_exit(T, C) == JITLOCK_OK, "re-exit");
        } else if (Op == 1) {
          int Rc = jitlock_rt_wait_timed(T, C, 200000);
          Check(Rc == JITLOCK_OK || Rc == JITLOCK_ETIMEDOUT, "wait");
          C = Handle.load();
          Check(jitlock_rt_holds_lock(T, C) == 1, "wait returned without "
                                                  "holding the object");
        } else if (Op == 2) {
          Check(jitlock_rt_notify_all(T, C) == JITLOCK_OK, "notify");
        }
        uint64_t Seen = Counter;
        pollAsCompiledCode(T, L); // the collector may move C here
        C = Handle.load();
        Counter = Seen + 1;
        C->payload += 1;
        Check(jitlock_rt_monitor_exit(T, C) == JITLOCK_OK, "exit failed");
      }
      Check(lockStack(T).empty(), "lock stack not empty at the end");
      Check(jitlock_rt_detach() == JITLOCK_OK, "detach");
      Finished.fetch_add(1);
    });

  {
    NativeScope Native(self);
    std::thread Collector([&] {
      while (Finished.load() != Threads) {
        TheHeap.move(Handle);
        // Now and then the monitor goes, so that fast locks and contended
        // inflations come back.
        if (Moves.fetch_add(1) % 4 == 3)
          jitlock_rt_deflate_idle();
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    });
    for (std::thread &T : Mutators)
      T.join();
    Collector.join();
  }
  std::printf("moves=%llu\n", (unsigned long long)Moves.load());
  EXPECT_EQ(Failures.load(), 0u);
  EXPECT_EQ(Counter, uint64_t(Threads) * Iterations) << "lost increments";
  Obj *Last = Handle.load();
  EXPECT_EQ(Last->payload, uint64_t(Threads) * Iterations);
  EXPECT_EQ(jitlock_rt_owner_of(Last), nullptr);
  EXPECT_GT(Moves.load(), 0u);
}

} // namespace
