//===- InterruptTest.cpp - Interrupting waits
//------------------------------===//
//
// jitlock_rt_interrupt and the waits it ends (W1-W3 and I1-I2 in
// Synchronizer.cpp):
//
//   BeforeTheWait          a pending interrupt ends the wait at once, with
//                          JITLOCK_EINTERRUPTED and the flag cleared, never
//                          releasing the monitor (a contender stays queued)
//   DuringUntimedWait,     an interrupt wakes a waiter in the wait set, which
//   DuringTimedWait        re-acquires the monitor with its recursions
//   NotWaiting             the flag stays set until the next wait, which
//                          returns at once; clear and test; bad threads
//   RacingNotify           (stress) waiters, notifies and interrupts race:
//                          every notify is consumed by a waiter that returns
//                          normally, every interrupt either ends a wait or
//                          stays pending, and nothing else happens
//   RacingDeflation        (stress) interrupted waiters re-enter while
//                          deflate_idle runs in a loop: mutual exclusion and
//                          the recursion count hold
//
// The stress tests print their seeds (JITLOCK_INTERRUPT_SEED replays one).
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include <algorithm>
#include <cinttypes>
#include <random>

using namespace jitlock_test;

namespace {

class InterruptTest : public RuntimeTest {
protected:
  void interruptWaiter(bool timed);
};

constexpr uint64_t kHour = 3600ull * 1000 * 1000 * 1000;

TEST_F(InterruptTest, StatusName) {
  EXPECT_STREQ(jitlock_rt_status_name(JITLOCK_EINTERRUPTED),
               "JITLOCK_EINTERRUPTED");
}

// The guarded step is W1's check: without it the wait releases the monitor,
// the contender gets in (and notifies, so that the test ends).
TEST_F(InterruptTest, BeforeTheWait) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // [A A B] and A again: inflated, 3 holds

  Worker contender;
  std::atomic<bool> entered{false};
  contender.post([&] {
    jitlock_thread *t = contender.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    entered = true;
    EXPECT_EQ(jitlock_rt_notify(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);

  EXPECT_EQ(jitlock_rt_is_interrupted(self), 0);
  ASSERT_EQ(jitlock_rt_interrupt(self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_is_interrupted(self), 1);
  EXPECT_EQ(jitlock_rt_wait(self, a), JITLOCK_EINTERRUPTED);
  EXPECT_EQ(jitlock_rt_is_interrupted(self), 0) << "the wait consumes it";
  EXPECT_FALSE(entered.load()) << "the monitor was released";
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 3u);
  EXPECT_EQ(i.waiting, 0u);
  EXPECT_EQ(i.entry_queued, 1u);

  // The timed wait and a fast-locked object (inflated by the wait) alike.
  ASSERT_EQ(jitlock_rt_interrupt(self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, b, kHour), JITLOCK_EINTERRUPTED);
  EXPECT_EQ(jitlock_rt_is_interrupted(self), 0);
  EXPECT_EQ(inspect(b).owner, self);
  EXPECT_EQ(inspect(b).holds, 1u);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(contender.join());
  EXPECT_TRUE(entered.load());
}

// A waiter on `o`, holding it `holds` times, interrupted while it waits. The
// guarded step is I2's wake-up: without it the waiter sleeps on, and the test
// notifies it to end.
void InterruptTest::interruptWaiter(bool timed) {
  Obj &o = *newObj();
  Worker waiter;
  std::atomic<int> rc{-1};
  std::atomic<uint64_t> holdsAfter{0};
  std::atomic<int> flagAfter{-2};
  waiter.post([&] {
    jitlock_thread *t = waiter.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
    rc = timed ? jitlock_rt_wait_timed(t, &o, kHour) : jitlock_rt_wait(t, &o);
    holdsAfter = inspect(&o).holds;
    flagAfter = jitlock_rt_is_interrupted(t);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
  });
  ASSERT_TRUE(waitWaiting(&o)) << describe(&o);
  ASSERT_EQ(jitlock_rt_interrupt(waiter.thread()), JITLOCK_OK);
  if (!waitFor(std::chrono::seconds(10), [&] { return waiter.finished(); })) {
    ADD_FAILURE() << "the interrupted waiter did not return: " << describe(&o);
    ASSERT_EQ(enter(&o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_notify(self, &o), JITLOCK_OK);
    ASSERT_EQ(exit(&o), JITLOCK_OK);
  }
  ASSERT_TRUE(waiter.join());
  EXPECT_EQ(rc.load(), JITLOCK_EINTERRUPTED) << st(rc.load());
  EXPECT_EQ(holdsAfter.load(), 2u) << "the recursions are restored";
  EXPECT_EQ(flagAfter.load(), 0) << "the wait consumes the flag";
  EXPECT_EQ(inspect(&o).owner, nullptr);
  EXPECT_EQ(inspect(&o).waiting, 0u);
}

TEST_F(InterruptTest, DuringUntimedWait) { interruptWaiter(/*timed=*/false); }

TEST_F(InterruptTest, DuringTimedWait) { interruptWaiter(/*timed=*/true); }

TEST_F(InterruptTest, NotWaiting) {
  MisuseLog log;
  reconfigureWithLog(log);
  Obj &o = *newObj();
  Worker w;
  ASSERT_EQ(jitlock_rt_interrupt(w.thread()), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_interrupt(w.thread()), JITLOCK_OK); // they do not add
  EXPECT_EQ(jitlock_rt_is_interrupted(w.thread()), 1) << "stays set";
  w.call([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait(t, &o), JITLOCK_EINTERRUPTED);
    EXPECT_EQ(jitlock_rt_is_interrupted(t), 0);
    EXPECT_EQ(jitlock_rt_wait_timed(t, &o, 0), JITLOCK_ETIMEDOUT)
        << "one interrupt ends one wait";
    EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
  });

  // Test and clear, by the thread itself only.
  ASSERT_EQ(jitlock_rt_interrupt(w.thread()), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_clear_interrupt(w.thread()), -1);
  EXPECT_EQ(log.last().status, JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_is_interrupted(w.thread()), 1);
  w.call([&] {
    EXPECT_EQ(jitlock_rt_clear_interrupt(w.thread()), 1);
    EXPECT_EQ(jitlock_rt_clear_interrupt(w.thread()), 0);
  });
  EXPECT_EQ(jitlock_rt_is_interrupted(w.thread()), 0);

  // Threads that are not attached: never read.
  log.clear();
  EXPECT_EQ(jitlock_rt_interrupt(nullptr), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(log.last().status, JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_is_interrupted(nullptr), -1);
  EXPECT_EQ(jitlock_rt_clear_interrupt(nullptr), -1);
  jitlock_thread *gone = w.thread();
  w.stop();
  EXPECT_EQ(jitlock_rt_interrupt(gone), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_is_interrupted(gone), -1);
  Worker unattached(/*attach=*/false);
  EXPECT_EQ(jitlock_rt_interrupt(unattached.thread()), JITLOCK_ENOT_ATTACHED);
  // A thread attaches with a clear flag.
  ASSERT_EQ(jitlock_rt_interrupt(self), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  self = jitlock_rt_attach();
  EXPECT_EQ(jitlock_rt_is_interrupted(self), 0);
}

// Rounds: kWaiters threads join the wait set in turn (the first is the
// longest waiter, whom a notify picks first), then one thread notifies
// kNotifies times while another interrupts kInterrupts distinct waiters,
// chosen at random among the first ones. Fewer notifies and interrupts than
// waiters leave someone in the wait set, so every notify found a waiter:
// exactly kNotifies waiters must return JITLOCK_OK (a notified waiter that
// returned interrupted would have lost its notification, as nobody passes it
// on). An interrupted waiter returns JITLOCK_EINTERRUPTED or keeps its flag
// (it was notified first); nobody else does either. The guarded step is W3's
// "WaitingOn is still m": a waiter that, once notified, returned
// interrupted because its flag was set would break the count.
TEST_F(InterruptTest, RacingNotify) {
  const uint64_t seed =
      seedFromEnv("InterruptTest.RacingNotify", "JITLOCK_INTERRUPT_SEED");
  constexpr int kWaiters = 6, kNotifies = 2, kInterrupts = 3;
  const int rounds =
      int(envU64("JITLOCK_INTERRUPT_ROUNDS", kSanitized ? 200 : 1000));
  std::mt19937_64 rng(seed);

  std::vector<std::unique_ptr<Worker>> waiters;
  for (int i = 0; i < kWaiters; ++i)
    waiters.push_back(std::make_unique<Worker>());
  Worker notifier, interrupter;
  uint64_t notifiedAndInterrupted = 0;

  Watchdog dog(std::chrono::seconds(120), "round 0",
               [&](const std::string &phase) {
                 std::fprintf(stderr,
                              "InterruptTest.RacingNotify: %s did not end in "
                              "120 s (seed %" PRIu64 "): a lost wake-up?\n",
                              phase.c_str(), seed);
               });
  for (int round = 0; round < rounds; ++round) {
    dog.phase("round " + std::to_string(round));
    Obj &o = *newObj();
    std::vector<std::atomic<int>> rcs(kWaiters);
    for (int i = 0; i < kWaiters; ++i) {
      rcs[i] = -1;
      Worker &w = *waiters[i];
      w.post([&, i] {
        jitlock_thread *t = w.thread();
        ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
        rcs[i] = jitlock_rt_wait(t, &o);
        EXPECT_EQ(inspect(&o).owner, t);
        EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
      });
      ASSERT_TRUE(waitWaiting(&o, i + 1)) << describe(&o);
    }
    // Targets among the first kNotifies + 1 waiters, where notifies land.
    std::vector<int> order(kNotifies + kInterrupts);
    for (int i = 0; i < int(order.size()); ++i)
      order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int> targets(order.begin(), order.begin() + kInterrupts);
    unsigned notifyDelay = unsigned(rng() % 64),
             interruptDelay = unsigned(rng() % 64);
    std::atomic<int> go{0};
    notifier.post([&] {
      jitlock_thread *t = notifier.thread();
      go.fetch_add(1);
      while (go.load() < 2) {
      }
      for (unsigned s = notifyDelay; s; --s)
        std::this_thread::yield();
      for (int k = 0; k < kNotifies; ++k) {
        ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_notify(t, &o), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
      }
    });
    interrupter.post([&] {
      go.fetch_add(1);
      while (go.load() < 2) {
      }
      for (unsigned s = interruptDelay; s; --s)
        std::this_thread::yield();
      for (int i : targets)
        EXPECT_EQ(jitlock_rt_interrupt(waiters[i]->thread()), JITLOCK_OK);
    });
    ASSERT_TRUE(notifier.join());
    ASSERT_TRUE(interrupter.join());

    // Everyone notified or interrupted returns; the rest stay waiting.
    auto returned = [&] {
      int n = 0;
      for (auto &rc : rcs)
        n += rc.load() != -1;
      return n;
    };
    int ok = 0, interrupted = 0;
    // A target returns either way: notified first, or interrupted in the
    // wait set.
    ASSERT_TRUE(waitUntil([&] {
      ok = interrupted = 0;
      for (auto &rc : rcs) {
        ok += rc.load() == JITLOCK_OK;
        interrupted += rc.load() == JITLOCK_EINTERRUPTED;
      }
      for (int i : targets)
        if (rcs[i].load() == -1)
          return false;
      return ok == kNotifies &&
             ok + interrupted + int(inspect(&o).waiting) == kWaiters &&
             returned() == ok + interrupted;
    })) << "round "
        << round << ": " << ok << " returned normally, " << interrupted
        << " interrupted, " << describe(&o)
        << " (every notify must reach a waiter that returns normally)";

    // Each target either returned interrupted or keeps its flag; nobody else
    // did either. Clear the flags for the next round.
    for (int i = 0; i < kWaiters; ++i) {
      bool target = std::count(targets.begin(), targets.end(), i) != 0;
      int flag = jitlock_rt_is_interrupted(waiters[i]->thread());
      bool wasInterrupted = rcs[i].load() == JITLOCK_EINTERRUPTED;
      if (target) {
        EXPECT_NE(wasInterrupted, flag == 1)
            << "round " << round << ", waiter " << i << ": " << st(rcs[i]);
        notifiedAndInterrupted += rcs[i].load() == JITLOCK_OK;
      } else {
        EXPECT_FALSE(wasInterrupted || flag) << "round " << round;
      }
    }
    // The ones still waiting: a notifyAll ends the round.
    {
      NativeScope native(self);
      notifier.call([&] {
        jitlock_thread *t = notifier.thread();
        ASSERT_EQ(jitlock_rt_monitor_enter(t, &o), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_notify_all(t, &o), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_monitor_exit(t, &o), JITLOCK_OK);
      });
    }
    for (int i = 0; i < kWaiters; ++i) {
      ASSERT_TRUE(waiters[i]->join());
      waiters[i]->call(
          [&, i] { jitlock_rt_clear_interrupt(waiters[i]->thread()); });
    }
    if (HasFailure())
      break;
  }
  std::printf("InterruptTest.RacingNotify: %d rounds, %" PRIu64
              " waiters notified before their interrupt\n",
              rounds, notifiedAndInterrupted);
}

// Waiters on one object, each holding it twice, wait (timed or not) and are
// interrupted or notified at random, while a thread deflates idle monitors in
// a loop. After every wait the waiter must own the object with both holds,
// alone. The guarded step is W3's A4 count before leaving the wait set:
// without it the monitor can be deflated under the interrupted waiter's
// re-entry.
TEST_F(InterruptTest, RacingDeflation) {
  const uint64_t seed =
      seedFromEnv("InterruptTest.RacingDeflation", "JITLOCK_INTERRUPT_SEED");
  constexpr int kThreads = 4;
  const auto runFor = std::chrono::milliseconds(
      envU64("JITLOCK_INTERRUPT_MS", kSanitized ? 1000 : 2000));
  Obj &o = *newObj();
  std::atomic<bool> stop{false}, violated{false};
  std::atomic<int> inside{0};
  std::atomic<uint64_t> interruptedWaits{0}, waits{0}, deflated{0};
  std::vector<jitlock_thread *> threads(kThreads, nullptr);
  std::atomic<int> attached{0};

  Watchdog dog(std::chrono::seconds(120), "running",
               [&](const std::string &phase) {
                 std::fprintf(stderr,
                              "InterruptTest.RacingDeflation: %s did not end "
                              "in 120 s (seed %" PRIu64 ")\n",
                              phase.c_str(), seed);
               });
  std::vector<std::thread> workers;
  for (int id = 0; id < kThreads; ++id)
    workers.emplace_back([&, id] {
      jitlock_thread *t = jitlock_rt_attach();
      threads[id] = t;
      attached.fetch_add(1);
      std::mt19937_64 rng(seed * 977 + id);
      while (!stop.load(std::memory_order_relaxed)) {
        if (jitlock_rt_monitor_enter(t, &o) != JITLOCK_OK ||
            jitlock_rt_monitor_enter(t, &o) != JITLOCK_OK) {
          violated = true;
          break;
        }
        int rc = rng() % 4 == 0 ? jitlock_rt_wait(t, &o)
                                : jitlock_rt_wait_timed(t, &o, rng() % 100000);
        waits.fetch_add(1, std::memory_order_relaxed);
        interruptedWaits.fetch_add(rc == JITLOCK_EINTERRUPTED,
                                   std::memory_order_relaxed);
        if (rc != JITLOCK_OK && rc != JITLOCK_EINTERRUPTED &&
            rc != JITLOCK_ETIMEDOUT)
          violated = true;
        if (inside.fetch_add(1) != 0)
          violated = true;
        if (!jitlock_rt_holds_lock(t, &o) || inspect(&o).holds != 2)
          violated = true;
        for (unsigned s = rng() % 16; s; --s)
          std::this_thread::yield();
        inside.fetch_sub(1);
        if (rng() % 4 == 0)
          jitlock_rt_notify(t, &o); // keeps some waits ending normally
        jitlock_rt_clear_interrupt(t);
        if (jitlock_rt_monitor_exit(t, &o) != JITLOCK_OK ||
            jitlock_rt_monitor_exit(t, &o) != JITLOCK_OK) {
          violated = true;
          break;
        }
        // Idle now and then, so that the monitor can be deflated.
        if (rng() % 2)
          for (unsigned s = rng() % 256; s; --s)
            std::this_thread::yield();
      }
      attached.fetch_sub(1);
      // Until every thread is done, anyone may still wait for a notify.
      while (attached.load() != 0) {
        jitlock_rt_monitor_enter(t, &o);
        jitlock_rt_notify_all(t, &o);
        jitlock_rt_monitor_exit(t, &o);
        std::this_thread::yield();
      }
      jitlock_rt_detach();
    });
  ASSERT_TRUE(waitUntil([&] { return attached.load() == kThreads; }));

  std::thread deflater([&] {
    while (!stop.load(std::memory_order_relaxed))
      deflated.fetch_add(jitlock_rt_deflate_idle(), std::memory_order_relaxed);
  });
  {
    NativeScope native(self);
    std::mt19937_64 rng(seed);
    auto end = std::chrono::steady_clock::now() + runFor;
    while (std::chrono::steady_clock::now() < end && !violated.load()) {
      EXPECT_EQ(jitlock_rt_interrupt(threads[rng() % kThreads]), JITLOCK_OK);
      for (unsigned s = rng() % 32; s; --s)
        std::this_thread::yield();
    }
    stop = true;
    // A waiter whose interrupt came after its last wait began and before
    // the stop could be waiting untimed: interrupt everyone until all left.
    while (attached.load() != 0) {
      for (jitlock_thread *t : threads)
        jitlock_rt_interrupt(t); // may have detached: ENOT_ATTACHED
      std::this_thread::yield();
    }
  }
  for (std::thread &w : workers)
    w.join();
  deflater.join();
  EXPECT_FALSE(violated.load()) << "seed " << seed;
  EXPECT_GT(interruptedWaits.load(), 0u);
  std::printf("InterruptTest.RacingDeflation: %" PRIu64 " waits, %" PRIu64
              " interrupted, %" PRIu64 " monitors deflated\n",
              waits.load(), interruptedWaits.load(), deflated.load());
}

} // namespace
