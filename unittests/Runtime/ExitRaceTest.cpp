//===- ExitRaceTest.cpp - The inflated exit against threads about to park -===//
//
// The inflated exit (N3 in Synchronizer.cpp) releases with a plain store and
// then reads the entry count, with no fence in between under
// JITLOCK_EXIT_STORE: a thread joining the entry queue at that moment is
// seen only because it issues membarrier before it re-checks the owner
// (J1-J3). A lost wake-up leaves a thread asleep on a free monitor for good.
//
// Here threads with no spin at all (spin_limit 0: every contended enter
// joins the queue) take one inflated object in turns of a few instructions,
// so that joins land on exits all the time, under each exit the runtime
// offers. Checked: mutual exclusion, every increment counted, and progress:
// a watchdog fails the test, with the monitor's state, if the threads stop
// advancing for 60 s.
//
//===----------------------------------------------------------------------===//
#include "MonitorStorage.h"
#include "RuntimeTestUtil.h"
#include "Synchronizer.h"
#include "Thread.h"
#include "Watchdog.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

using namespace jitlock_test;

namespace {

class ExitRaceTest : public RuntimeTest,
                     public ::testing::WithParamInterface<uint32_t> {
protected:
  // No spin, and the exit under test; false (with the defaults back) where
  // the kernel cannot give the store exit its membarrier.
  bool configureExit() {
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.monitor_storage = testMonitorStorage();
    cfg.spin_limit = 0;
    cfg.inflated_exit = GetParam();
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    // The exit is part of the layout, handed out at attach.
    EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    int rc = jitlock_rt_configure(&cfg);
    if (rc != JITLOCK_OK) {
      EXPECT_EQ(GetParam(), uint32_t(JITLOCK_EXIT_STORE)) << st(rc);
      jitlock_rt_default_config(&cfg);
      EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    }
    self = jitlock_rt_attach();
    return rc == JITLOCK_OK;
  }
};

TEST_P(ExitRaceTest, ParkersArriveAsTheOwnerExits) {
  if (!configureExit())
    GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not "
                    "available here: the store exit cannot be configured";
  ASSERT_NE(self, nullptr);
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  ASSERT_EQ(l.monitor_exit, GetParam());

  // Until every minimum is reached, or the rounds reach their maximum.
  constexpr int kThreads = 8;
  constexpr uint64_t kMinRounds = 150, kMaxRounds = 1500, kMinTurns = 200000,
                     kMinParks = 2000;
  const uint64_t seed = std::random_device{}();
  std::printf("ExitRaceTest.ParkersArriveAsTheOwnerExits exit=%s seed=%" PRIu64
              "\n",
              GetParam() == JITLOCK_EXIT_STORE ? "store" : "fence", seed);

  Obj *o = newObj();
  // Inflated from the start: every exit below is N3.
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  ASSERT_EQ(inspect(o).state, JITLOCK_STATE_INFLATED);

  uint64_t counter = 0; // guarded by o; plain on purpose
  std::atomic<int> inside{0};
  std::atomic<bool> violated{false};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> stop{false};
  jitlock_rt_stats s0 = stats();

  // Rounds of a few milliseconds of turns, each ended by all threads
  // arriving: a wake-up lost by a round's last exits leaves its thread
  // asleep on a free monitor, and the round never ends (one lost earlier is
  // repaired by the next exit, which finds the count).
  std::atomic<int> arrived{0};
  std::atomic<bool> pause{false};
  std::atomic<uint64_t> round{0};
  std::vector<std::thread> threads;
  {
    jitlock_test::Watchdog dog(
        std::chrono::seconds(30), "round 0", [&](const std::string &phase) {
          std::fprintf(stderr,
                       "ExitRaceTest: %s did not end in 30 s (seed %" PRIu64
                       ", %" PRIu64 " turns done, %d threads arrived): a "
                       "lost wake-up? %s\n",
                       phase.c_str(), seed, done.load(), arrived.load(),
                       describe(o).c_str());
        });
    for (int id = 0; id < kThreads; ++id)
      threads.emplace_back([&, id] {
        jitlock_thread *t = jitlock_rt_attach();
        std::mt19937_64 rng(seed * 131 + id);
        for (uint64_t r = 0; !stop.load(); ++r) {
          while (!pause.load(std::memory_order_relaxed)) {
            if (jitlock_rt_monitor_enter(t, o) != JITLOCK_OK) {
              violated = true;
              break;
            }
            if (inside.fetch_add(1, std::memory_order_relaxed) != 0)
              violated = true;
            ++counter;
            // Mostly nothing, now and then a little more: exits then meet
            // threads that have just decided to park.
            for (unsigned spin = rng() % 8 == 0 ? rng() % 64 : 0; spin; --spin)
              std::atomic_signal_fence(std::memory_order_seq_cst);
            inside.fetch_sub(1, std::memory_order_relaxed);
            if (jitlock_rt_monitor_exit(t, o) != JITLOCK_OK) {
              violated = true;
              break;
            }
            done.fetch_add(1, std::memory_order_relaxed);
          }
          arrived.fetch_add(1);
          while (round.load() == r)
            std::this_thread::yield();
        }
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
      });
    for (uint64_t r = 0;; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      pause = true;
      while (arrived.load() != kThreads)
        std::this_thread::yield();
      arrived = 0;
      pause = false;
      if (r + 1 >= kMinRounds && done.load() >= kMinTurns &&
          stats().parks - s0.parks >= kMinParks)
        stop = true;
      if (r + 1 >= kMaxRounds)
        stop = true;
      dog.phase("round " + std::to_string(r + 1));
      round = r + 1;
      if (stop)
        break;
    }
    for (std::thread &th : threads)
      th.join();
  }
  EXPECT_FALSE(violated.load()) << "mutual exclusion violated, seed " << seed;
  EXPECT_EQ(counter, done.load()) << "seed " << seed;
  jitlock_lock_info i = inspect(o);
  EXPECT_EQ(i.owner, nullptr) << describe(o);
  EXPECT_EQ(i.entry_queued, 0u) << describe(o);
  jitlock_rt_stats s1 = stats();
  std::printf("  %" PRIu64 " turns, %" PRIu64 " contended enters, %" PRIu64
              " parks\n",
              done.load(), s1.contended_enters - s0.contended_enters,
              s1.parks - s0.parks);
  EXPECT_GE(s1.parks - s0.parks, kMinParks)
      << "threads rarely parked: the race was hardly run";
}

// J3, forced: a thread about to park finds the monitor owned (J1), and the
// owner's exit runs to its end before that thread counts itself, so the
// exit sees no one queued and wakes no one. The joiner's re-check after its
// barrier finds the monitor free and wakes the queue's head, itself, which
// takes the monitor instead of sleeping forever.
TEST_P(ExitRaceTest, ExitBetweenTheJoinersCheckAndItsCount) {
  if (!configureExit())
    GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not "
                    "available here: the store exit cannot be configured";
  Obj *o = newObj();
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
  ASSERT_EQ(inspect(o).state, JITLOCK_STATE_INFLATED);
  jitlock_rt_stats s0 = stats();

  std::atomic<int> stage{0}; // 1: the joiner is in the gap; 2: exited
  HookScope<jitlock::JoinStage, jitlock::Monitor &> hook(
      jitlock::JoinTestHook, [&](jitlock::JoinStage at, jitlock::Monitor &) {
        if (at != jitlock::JoinStage::FoundOwned)
          return;
        stage = 1;
        while (stage.load() != 2)
          std::this_thread::yield();
      });
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), o); });
  ASSERT_TRUE(waitUntil([&] { return stage.load() == 1; }))
      << "the worker never tried to join: " << describe(o);
  ASSERT_EQ(inspect(o).entry_queued, 0u);
  ASSERT_EQ(exit(o), JITLOCK_OK); // N3 sees a zero count
  stage = 2;
  bool entered =
      waitFor(std::chrono::seconds(5), [&] { return rc.load() == JITLOCK_OK; });
  EXPECT_TRUE(entered) << "lost wake-up: the joiner sleeps on a free monitor: "
                       << describe(o);
  if (!entered) { // Let it go, so that the test can end.
    ASSERT_EQ(enter(o), JITLOCK_OK);
    ASSERT_EQ(exit(o), JITLOCK_OK);
  }
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(stats().parks, s0.parks) << "it took the monitor without a park";
  EXPECT_EQ(inspect(o).owner, w.thread());
  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), o), JITLOCK_OK); });
}

// N3 against J1-J3 in lockstep, on the hardware: the owner's inline exit
// and a joiner that found the monitor owned start together, each after a
// random delay, trial after trial, so that the exit's release store and the
// joiner's count are in flight at once. Without J2 a core may perform the
// joiner's load of the owner before its count is visible and the exit's
// load of the count before its release is (both under the store exit; the
// joiner's side alone suffices under the fence exit), and the joiner sleeps
// on a free monitor. That state is checked after each exit, without a
// timeout: the exit has finished, the monitor is free, and the joiner
// sleeps in the queue with nothing to wake it. Without J2 this fails within
// a few hundred trials in most runs (not all: it needs both threads on a
// CPU at once); StepWindowTest forces the window every time through a hook,
// where this test runs the real barrier.
TEST_P(ExitRaceTest, ExitAndJoinInLockstep) {
  if (!configureExit())
    GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not "
                    "available here: the store exit cannot be configured";
  if (testMonitorStorage() != JITLOCK_MONITORS_POINTER)
    GTEST_SKIP() << "J2 is the same under every monitor storage: run once";
  const bool fenced = GetParam() == JITLOCK_EXIT_FENCE;
  // Trials until this budget is spent: a loaded machine runs fewer.
  const auto budget = std::chrono::milliseconds(
      envU64("JITLOCK_LOCKSTEP_MS", kSanitized ? 1000 : 2000));
  const uint64_t seed =
      seedFromEnv(fenced ? "ExitRaceTest.ExitAndJoinInLockstep/fence"
                         : "ExitRaceTest.ExitAndJoinInLockstep/store",
                  "JITLOCK_LOCKSTEP_SEED");
  Obj *o = newObj();
  ASSERT_EQ(enter(o), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  uint64_t h = o->hdr();
  jitlock::Monitor *m = jitlock::storage::monitorFor(o, h);
  ASSERT_NE(m, nullptr);

  // Trial t: this thread enters (ownerTrial = t); the joiner enters, finds
  // it owned and waits in the hook (ready = t); this thread starts both
  // (go = t); the joiner gets the monitor (joinerGot = t) and leaves it
  // (joinerLeft = t).
  std::atomic<uint64_t> ownerTrial{0}, joinerTrial{0}, ready{0}, go{0},
      joinerGot{0}, joinerLeft{0};
  std::atomic<bool> stop{false};
  std::mt19937_64 rng(seed);
  // Delays of up to a few hundred nanoseconds on either side sweep the two
  // sequences across each other.
  std::atomic<uint32_t> joinerDelay{0};
  auto delay = [](uint32_t n) {
    for (uint32_t i = 0; i < n; ++i)
      std::atomic_signal_fence(std::memory_order_seq_cst);
  };
  // Waits that are not part of the race give the CPU away now and then: on
  // a loaded machine the other side may need it.
  auto await = [](auto done) {
    for (uint32_t i = 1; !done(); ++i)
      if (i % 256 == 0)
        std::this_thread::yield();
  };
  HookScope<jitlock::JoinStage, jitlock::Monitor &> hook(
      jitlock::JoinTestHook, [&](jitlock::JoinStage at, jitlock::Monitor &) {
        if (at != jitlock::JoinStage::FoundOwned)
          return;
        uint64_t t = joinerTrial.load(std::memory_order_relaxed);
        ready.store(t);
        // Busy: the start is the race.
        while (go.load(std::memory_order_acquire) != t && !stop.load())
          ;
        delay(joinerDelay.load(std::memory_order_relaxed));
      });
  jitlock_thread *jt = nullptr;
  std::atomic<bool> attached{false};
  std::thread joiner([&] {
    jt = jitlock_rt_attach();
    attached = true;
    for (uint64_t t = 1;; ++t) {
      await([&] { return ownerTrial.load() == t || stop.load(); });
      if (ownerTrial.load() != t)
        break;
      joinerTrial.store(t, std::memory_order_relaxed);
      EXPECT_EQ(jitlock_rt_monitor_enter(jt, o), JITLOCK_OK);
      joinerGot = t;
      EXPECT_EQ(jitlock_rt_monitor_exit(jt, o), JITLOCK_OK);
      joinerLeft = t;
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  while (!attached.load())
    std::this_thread::yield();

  auto &node = jt->Node;
  uint64_t t = 0, queuedSeen = 0;
  bool stranded = false;
  const auto end = std::chrono::steady_clock::now() + budget;
  {
    Watchdog dog(std::chrono::seconds(60), "trial 1",
                 [&](const std::string &phase) {
                   std::fprintf(stderr,
                                "ExitAndJoinInLockstep: %s did not end in "
                                "60 s (seed %" PRIu64 "): %s\n",
                                phase.c_str(), seed, describe(o).c_str());
                 });
    while (!stranded && std::chrono::steady_clock::now() < end) {
      ++t;
      if (t % 256 == 0)
        dog.phase("trial " + std::to_string(t));
      uint32_t ownerDelay = rng() % 400;
      joinerDelay.store(rng() % 400, std::memory_order_relaxed);
      ASSERT_EQ(enter(o), JITLOCK_OK);
      ownerTrial = t;
      while (ready.load() != t) // busy: the start is the race
        ;
      go.store(t, std::memory_order_release);
      delay(ownerDelay);
      // N2-N3 inline.
      m->releaseOwner();
      if (fenced)
        std::atomic_thread_fence(std::memory_order_seq_cst);
      else
        std::atomic_signal_fence(std::memory_order_seq_cst);
      if (m->entryCount() != 0) {
        ++queuedSeen;
        jitlock_rt_monitor_exit_queued_slow(self, o);
      }
      // The joiner gets the monitor, or sleeps on it free with no wake-up
      // coming: only this thread could still send one, and it is done.
      await([&] {
        if (joinerGot.load() == t)
          return true;
        stranded = m->ownerAcquire() == 0 &&
                   node.Queue.load(std::memory_order_relaxed) ==
                       jitlock::QueueNode::EntryQueue &&
                   node.Wakeup.load() == jitlock::QueueNode::Sleep &&
                   jitlock_rt_thread_state(jt) == JITLOCK_THREAD_BLOCKED;
        return stranded;
      });
      if (stranded) {
        // Let it go: our enter and exit find it counted.
        ASSERT_EQ(enter(o), JITLOCK_OK);
        ASSERT_EQ(exit(o), JITLOCK_OK);
      }
      await([&] { return joinerLeft.load() == t; });
    }
    stop = true;
    joiner.join();
  }
  std::printf("  %" PRIu64 " trials, %" PRIu64 " exits saw the joiner\n", t,
              queuedSeen);
  EXPECT_FALSE(stranded) << "lost wake-up in trial " << t << " (seed " << seed
                         << "): the exit saw no joiner and the joiner's "
                            "re-check (J3) saw the owner";
  EXPECT_GT(t, 0u);
}

INSTANTIATE_TEST_SUITE_P(Exits, ExitRaceTest,
                         ::testing::Values(JITLOCK_EXIT_STORE,
                                           JITLOCK_EXIT_FENCE),
                         [](const ::testing::TestParamInfo<uint32_t> &info) {
                           return info.param == JITLOCK_EXIT_STORE
                                      ? std::string("store")
                                      : std::string("fence");
                         });

} // namespace
