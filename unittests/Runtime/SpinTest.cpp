//===- SpinTest.cpp - Adaptive spinning of contended enters ---------------===//
//
// The adaptation rule on its own (AdaptiveSpin.h): a budget that grows after
// a spin that took the monitor, shrinks after one that ran out, and stays
// within its bounds. Then the rule as the runtime applies it, read from the
// monitor's budget: a spin that runs out halves it, an enterer whose owner
// is in native code does not spin at all. Then eight threads on one object,
// more than this machine has cores, through every way an owner can keep
// the monitor for long (a yield, native code, a wait, recursion) and
// deflations meanwhile: mutual exclusion and progress. Nothing here asserts
// a time.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include "AdaptiveSpin.h"
#include "Monitor.h"
#include "MonitorStorage.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <random>
#include <sched.h>

using namespace jitlock_test;
namespace spin = jitlock::spin;

namespace {

/// Limits worth checking: none, below, at and above the floor, the default,
/// and the largest.
constexpr uint32_t kLimits[] = {0, 1, 3, 4, 5, 7, 64, 1000, UINT32_MAX};

TEST(AdaptiveSpinRule, StartsAtTheLimit) {
  for (uint32_t Limit : kLimits)
    EXPECT_EQ(spin::budget(spin::InitialBudget, Limit), Limit) << Limit;
}

TEST(AdaptiveSpinRule, GrowsOnSuccessUpToTheLimit) {
  EXPECT_EQ(spin::adapt(4, true, 64), 8u);
  EXPECT_EQ(spin::adapt(8, true, 64), 16u);
  EXPECT_EQ(spin::adapt(31, true, 64), 62u);
  EXPECT_EQ(spin::adapt(40, true, 64), 64u);
  EXPECT_EQ(spin::adapt(64, true, 64), 64u);
  // No overflow next to the largest limit.
  EXPECT_EQ(spin::adapt(UINT32_MAX - 1, true, UINT32_MAX), UINT32_MAX);
  EXPECT_EQ(spin::adapt(UINT32_MAX / 2 + 1, true, UINT32_MAX), UINT32_MAX);
}

TEST(AdaptiveSpinRule, ShrinksOnFailureDownToTheFloor) {
  EXPECT_EQ(spin::adapt(64, false, 64), 32u);
  EXPECT_EQ(spin::adapt(9, false, 64), spin::FloorRounds);
  EXPECT_EQ(spin::adapt(spin::FloorRounds, false, 64), spin::FloorRounds);
  // A limit below the floor is the floor.
  EXPECT_EQ(spin::adapt(3, false, 3), 3u);
  EXPECT_EQ(spin::adapt(1, false, 1), 1u);
  // No spin stays no spin.
  EXPECT_EQ(spin::adapt(spin::InitialBudget, true, 0), 0u);
  EXPECT_EQ(spin::adapt(spin::InitialBudget, false, 0), 0u);
}

TEST(AdaptiveSpinRule, FailuresThenSuccessesWalkTheWholeRange) {
  const uint32_t Limit = 64;
  uint32_t B = spin::InitialBudget;
  unsigned Steps = 0;
  for (; spin::budget(B, Limit) > spin::FloorRounds; ++Steps)
    B = spin::adapt(B, false, Limit);
  EXPECT_EQ(Steps, 4u) << "64 -> 32 -> 16 -> 8 -> 4";
  for (Steps = 0; spin::budget(B, Limit) < Limit; ++Steps)
    B = spin::adapt(B, true, Limit);
  EXPECT_EQ(Steps, 4u) << "4 -> 8 -> 16 -> 32 -> 64";
}

TEST(AdaptiveSpinRule, StaysWithinItsBoundsWhateverItWasGiven) {
  // A stored budget may come from another object (a reused monitor) or
  // another limit: any value, any outcome.
  std::mt19937_64 Rng(42);
  for (uint32_t Limit : kLimits) {
    const uint32_t Floor = spin::floorRounds(Limit);
    EXPECT_EQ(Floor, Limit < spin::FloorRounds ? Limit : spin::FloorRounds);
    for (int I = 0; I < 2000; ++I) {
      uint32_t Stored = I < 4   ? uint32_t(I)
                        : I < 8 ? UINT32_MAX - uint32_t(I - 4)
                                : uint32_t(Rng());
      uint32_t Budget = spin::budget(Stored, Limit);
      EXPECT_GE(Budget, Floor);
      EXPECT_LE(Budget, Limit);
      for (bool Acquired : {true, false}) {
        uint32_t Next = spin::adapt(Stored, Acquired, Limit);
        EXPECT_GE(Next, Floor) << Stored << " " << Acquired << " " << Limit;
        EXPECT_LE(Next, Limit) << Stored << " " << Acquired << " " << Limit;
        if (Acquired)
          EXPECT_GE(Next, Budget) << "a success never shrinks it";
        else
          EXPECT_LE(Next, Budget) << "a failure never grows it";
      }
    }
  }
}

/// CPUs this process may run on.
unsigned cpusAvailable() {
  cpu_set_t Set;
  return sched_getaffinity(0, sizeof(Set), &Set) == 0 ? CPU_COUNT(&Set) : 1;
}

class SpinTest : public RuntimeTest {
protected:
  /// The monitor of inflated `O`.
  static jitlock::Monitor &monitorOf(const Obj *O) {
    uint64_t H = O->hdr();
    EXPECT_EQ(H & kLockMask, kMonitor) << describe(O);
    return *jitlock::storage::monitorFor(O, H);
  }
  static uint32_t budgetOf(const Obj *O) { return monitorOf(O).spinBudget(); }

  /// `self` holds `O`, inflated (a wait needs a monitor).
  void holdInflated(Obj *O) {
    ASSERT_EQ(enter(O), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, O, 0), JITLOCK_ETIMEDOUT);
  }

  /// `Contender` enters `O`, which `self` holds; once it is queued, `Held`
  /// runs, then `self` lets it have O. `Contender` ends with O released.
  template <typename Fn> void contend(Worker &Contender, Obj *O, Fn Held) {
    Contender.post([&] {
      EXPECT_EQ(jitlock_rt_monitor_enter(Contender.thread(), O), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_monitor_exit(Contender.thread(), O), JITLOCK_OK);
    });
    ASSERT_TRUE(waitEntryQueued(O)) << describe(O);
    Held();
    ASSERT_EQ(exit(O), JITLOCK_OK);
    ASSERT_TRUE(Contender.join()) << describe(O);
  }
};

TEST_F(SpinTest, ASpinThatRunsOutHalvesTheBudget) {
  // With one CPU every spin is turned away (no CPU to spare) and the budget
  // never moves.
  if (cpusAvailable() < 2)
    GTEST_SKIP() << "needs two CPUs";
  Obj *O = newObj();
  Worker Contender;
  jitlock_rt_config Defaults;
  jitlock_rt_default_config(&Defaults);
  const uint32_t Limit = Defaults.spin_limit;
  ASSERT_GE(Limit / 8, spin::FloorRounds);
  for (uint32_t Expected : {Limit / 2, Limit / 4, Limit / 8}) {
    holdInflated(O);
    // The owner (this thread) runs until the contender has parked, so the
    // contender's spin ran out.
    contend(Contender, O, [] {});
    EXPECT_EQ(spin::budget(budgetOf(O), Limit), Expected);
  }
}

TEST_F(SpinTest, NoSpinForAnOwnerInNativeCode) {
  Obj *O = newObj();
  Worker Contender;
  holdInflated(O);
  const uint32_t Before = budgetOf(O);
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  // The contender parks without spinning: a spin that ran out would have
  // halved the budget.
  contend(Contender, O,
          [&] { ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK); });
  EXPECT_EQ(budgetOf(O), Before);
}

/// What the hammering threads do while they hold the object, each picked at
/// random per iteration.
enum class Hold {
  Short,     ///< an increment
  Pause,     ///< a few hundred pause-length loops
  Yield,     ///< gives its CPU away: the owner is preempted
  Native,    ///< calls out to native code: the owner is not running
  Recursive, ///< enters again, non-adjacently through a second object
  Wait,      ///< waits with a zero timeout: exits and re-enters
  Count
};

TEST_F(SpinTest, EightThreadsHammerOneObject) {
  constexpr unsigned kThreads = 8;
  const unsigned Iterations = kSanitized ? 5000 : 40000;
  const char *Env = std::getenv("JITLOCK_SPIN_SEED");
  const uint64_t Seed =
      Env && *Env
          ? std::strtoull(Env, nullptr, 0)
          : uint64_t(
                std::chrono::steady_clock::now().time_since_epoch().count());
  std::printf("SpinTest.EightThreadsHammerOneObject seed=%" PRIu64
              " (JITLOCK_SPIN_SEED), %u threads on %u CPUs\n",
              Seed, kThreads, cpusAvailable());
  std::fflush(stdout);

  Obj *Shared = newObj();
  // Taken now and then, inflated by a wait each time: mostly idle, so the
  // deflations below find it, while enterers contend for it.
  Obj *Rare = newObj();
  std::atomic<unsigned> RareInside{0};
  Obj *Inner[kThreads];
  for (Obj *&I : Inner)
    I = newObj();
  jitlock_rt_layout Layout;
  jitlock_rt_get_layout(&Layout);
  std::atomic<unsigned> Inside{0}, Violations{0}, Ready{0}, Failures{0};
  std::atomic<bool> Go{false};
  uint64_t Payload = 0; // guarded by Shared
  std::atomic<uint64_t> Increments{0};
  std::atomic<uint64_t> Done[kThreads] = {};
  std::atomic<uint64_t> Deflated{0};

  Watchdog Dog(
      std::chrono::seconds(120), "hammering", [&](const std::string &) {
        std::fprintf(stderr,
                     "WATCHDOG: seed %" PRIu64 ", shared %s, done:", Seed,
                     describe(Shared).c_str());
        for (auto &D : Done)
          std::fprintf(stderr, " %" PRIu64, D.load());
        std::fprintf(stderr, "\n");
      });

  auto Hammer = [&](unsigned Id) {
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      ++Failures;
      return;
    }
    std::mt19937_64 Rng(Seed + Id);
    auto Check = [&](int RC) {
      if (RC != JITLOCK_OK && RC != JITLOCK_ETIMEDOUT)
        ++Failures;
    };
    ++Ready;
    while (!Go.load(std::memory_order_acquire))
      sched_yield();
    for (unsigned K = 0; K < Iterations; ++K) {
      // What compiled code does at a poll, so that deflations get through.
      auto *Poll = reinterpret_cast<std::atomic<uint64_t> *>(
          reinterpret_cast<char *>(T) + Layout.poll_word_offset);
      if (Poll->load(std::memory_order_relaxed) & Layout.poll_armed_bit)
        jitlock_rt_safepoint_poll(T);
      uint64_t R = Rng();
      // Mostly short holds, as a lock that is worth spinning for.
      Hold What = R % 8 < 4 ? Hold::Short : Hold(R % unsigned(Hold::Count));
      Check(jitlock_rt_monitor_enter(T, Shared));
      if (Inside.fetch_add(1, std::memory_order_relaxed) != 0)
        ++Violations;
      ++Payload;
      Increments.fetch_add(1, std::memory_order_relaxed);
      switch (What) {
      case Hold::Short:
      case Hold::Count:
        break;
      case Hold::Pause:
        for (unsigned P = (R >> 8) % 512; P; --P)
          Inside.load(std::memory_order_relaxed);
        break;
      case Hold::Yield:
        sched_yield();
        break;
      case Hold::Native:
        Check(jitlock_rt_enter_native(T));
        sched_yield();
        Check(jitlock_rt_leave_native(T));
        break;
      case Hold::Recursive:
        Check(jitlock_rt_monitor_enter(T, Inner[Id]));
        Check(jitlock_rt_monitor_enter(T, Shared));
        ++Payload;
        Increments.fetch_add(1, std::memory_order_relaxed);
        Check(jitlock_rt_monitor_exit(T, Shared));
        Check(jitlock_rt_monitor_exit(T, Inner[Id]));
        break;
      case Hold::Wait:
        // The wait gives the monitor up: leave the critical section first.
        Inside.fetch_sub(1, std::memory_order_relaxed);
        Check(jitlock_rt_wait_timed(T, Shared, 0));
        if (Inside.fetch_add(1, std::memory_order_relaxed) != 0)
          ++Violations;
        break;
      }
      Inside.fetch_sub(1, std::memory_order_relaxed);
      Check(jitlock_rt_monitor_exit(T, Shared));
      if (R >> 60 == 0) {
        Check(jitlock_rt_monitor_enter(T, Rare));
        if (RareInside.fetch_add(1, std::memory_order_relaxed) != 0)
          ++Violations;
        RareInside.fetch_sub(1, std::memory_order_relaxed);
        Check(jitlock_rt_wait_timed(T, Rare, 0));
        if (RareInside.fetch_add(1, std::memory_order_relaxed) != 0)
          ++Violations;
        RareInside.fetch_sub(1, std::memory_order_relaxed);
        Check(jitlock_rt_monitor_exit(T, Rare));
      }
      Done[Id].store(K + 1, std::memory_order_relaxed);
      // Now and then the "GC" deflates what is idle: enterers cancel it or
      // start over.
      if (Id == 0 && K % 256 == 255)
        Deflated += jitlock_rt_deflate_idle();
    }
    if (jitlock_rt_detach() != JITLOCK_OK)
      ++Failures;
  };

  // The main thread steps out of the way of the deflations' handshakes.
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  std::vector<std::thread> Threads;
  for (unsigned Id = 0; Id < kThreads; ++Id)
    Threads.emplace_back(Hammer, Id);
  while (Ready.load() < kThreads)
    sched_yield();
  jitlock_rt_stats Before = stats();
  Go.store(true, std::memory_order_release);
  for (std::thread &T : Threads)
    T.join();
  jitlock_rt_stats After = stats();
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);

  std::printf("  contended enters %" PRIu64 ", parks %" PRIu64
              ", deflations %" PRIu64 "\n",
              After.contended_enters - Before.contended_enters,
              After.parks - Before.parks, Deflated.load());
  EXPECT_EQ(Violations.load(), 0u) << "two owners at once; seed " << Seed;
  EXPECT_EQ(Failures.load(), 0u) << "a runtime call failed; seed " << Seed;
  // Progress: every thread got through every one of its iterations.
  for (unsigned Id = 0; Id < kThreads; ++Id)
    EXPECT_EQ(Done[Id].load(), Iterations) << "thread " << Id;
  // No increment under the lock was lost.
  EXPECT_EQ(Payload, Increments.load()) << "seed " << Seed;
  jitlock_lock_info Info = inspect(Shared);
  EXPECT_EQ(Info.owner, nullptr) << describe(Shared);
  EXPECT_EQ(Info.entry_queued, 0u) << describe(Shared);
  EXPECT_EQ(inspect(Rare).owner, nullptr) << describe(Rare);
  EXPECT_GT(After.contended_enters, Before.contended_enters)
      << "the threads never met: nothing was tested";
}

} // namespace
