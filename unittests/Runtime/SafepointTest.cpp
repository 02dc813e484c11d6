//===- SafepointTest.cpp - Safepoints, thread states and handshakes -------===//
//
// What a VM relies on: a safepoint stops every managed thread at a poll and
// keeps it there, never waits for native or parked threads, loses and
// duplicates no notification, and a handshake operation runs exactly once
// per target whatever the target is doing.
//
//===----------------------------------------------------------------------===//
#include "SafepointTestUtil.h"
#include "Watchdog.h"

#include <cinttypes>
#include <map>
#include <random>
#include <set>

using namespace jitlock_test;

namespace {

using Clock = std::chrono::steady_clock;

class SafepointTest : public RuntimeTest {};

/// Busy-waits `us` microseconds (a sleep would let a broken runtime's
/// threads be descheduled too, and hide their progress).
void spinFor(unsigned us) {
  auto end = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < end)
    std::this_thread::yield();
}

TEST_F(SafepointTest, BeginAndEndCheckTheCaller) {
  EXPECT_EQ(jitlock_rt_thread_state(self), JITLOCK_THREAD_MANAGED);
  EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_ESTATE)
      << "a managed thread cannot begin a safepoint";
  EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_ESTATE);
  EXPECT_EQ(jitlock_rt_leave_native(self), JITLOCK_ESTATE);
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_enter_native(self), JITLOCK_ESTATE);
  EXPECT_EQ(jitlock_rt_thread_state(self), JITLOCK_THREAD_NATIVE);
  ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
  EXPECT_TRUE(jitlock_rt_in_safepoint());
  EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_ESTATE) << "nested";
  // The holder may query and deflate without deadlocking on itself.
  jitlock_rt_stats s;
  jitlock_rt_get_stats(&s);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_ESTATE);
  EXPECT_EQ(jitlock_rt_leave_native(self), JITLOCK_ESTATE)
      << "its own safepoint would stop it for good";
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_in_safepoint());
  EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_ESTATE);
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_enter_runtime(self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_state(self), JITLOCK_THREAD_RUNTIME);
  EXPECT_EQ(jitlock_rt_enter_native(self), JITLOCK_ESTATE);
  ASSERT_EQ(jitlock_rt_leave_runtime(self), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_thread_state(self), JITLOCK_THREAD_MANAGED);
  EXPECT_EQ(jitlock_rt_enter_native(nullptr), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_thread_state(nullptr), -1);
}

TEST_F(SafepointTest, LayoutReportsThePollWordOnItsOwnLine) {
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  EXPECT_EQ(l.poll_armed_bit, 1u);
  EXPECT_EQ(l.poll_word_offset % l.cache_line_size, 0u);
  EXPECT_GE(l.poll_word_offset, l.lock_stack_end_offset);
  EXPECT_LT(l.poll_word_offset + 8, l.thread_size);
  auto *word = reinterpret_cast<std::atomic<uint64_t> *>(
      reinterpret_cast<char *>(self) + l.poll_word_offset);
  EXPECT_EQ(word->load(), 0u) << "disarmed outside a safepoint";
  char buf[512];
  jitlock_rt_layout_fingerprint(&l, buf, sizeof buf);
  EXPECT_NE(std::string(buf).find(
                ";poll=" + std::to_string(l.poll_word_offset) + ";armed=1"),
            std::string::npos)
      << buf;
}

// While a safepoint is held no managed thread moves, over many safepoints,
// and between them they all run.
TEST_F(SafepointTest, StoppedMeansStopped) {
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  {
    PollingThreads mutators(4);
    VmThread vm;
    for (int round = 0; round < 200; ++round) {
      ASSERT_TRUE(vm.stop()) << "round " << round << ": no safepoint";
      std::vector<uint64_t> before = mutators.counts();
      spinFor(round % 10 == 0 ? 2000 : 100);
      std::vector<uint64_t> after = mutators.counts();
      EXPECT_EQ(before, after) << "a thread ran during safepoint " << round;
      ASSERT_TRUE(vm.release());
      // Not vacuous: every thread runs again before the next safepoint, so
      // that each one is stopped mid-loop every round.
      ASSERT_TRUE(waitUntil([&] {
        std::vector<uint64_t> now = mutators.counts();
        for (size_t i = 0; i < now.size(); ++i)
          if (now[i] <= before[i])
            return false;
        return true;
      })) << "a thread did not run again after safepoint "
          << round;
    }
  }
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
}

// A native thread does not delay a safepoint, and is held at leave_native
// until the safepoint ends.
TEST_F(SafepointTest, NativeIsNeverWaitedFor) {
  std::atomic<int> stage{0};
  std::thread native([&] {
    jitlock_thread *t = jitlock_rt_attach();
    ASSERT_EQ(jitlock_rt_enter_native(t), JITLOCK_OK);
    stage = 1;
    while (stage.load() != 2) // "foreign code": never polls
      std::this_thread::yield();
    EXPECT_EQ(jitlock_rt_leave_native(t), JITLOCK_OK);
    stage = 3;
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  ASSERT_TRUE(waitUntil([&] { return stage.load() == 1; }));
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  {
    VmThread vm;
    ASSERT_TRUE(vm.stop());
    stage = 2;
    EXPECT_FALSE(waitFor(std::chrono::milliseconds(100), [&] {
      return stage.load() == 3;
    })) << "leave_native returned during a safepoint";
    ASSERT_TRUE(vm.release());
    EXPECT_TRUE(waitUntil([&] { return stage.load() == 3; }));
  }
  native.join();
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
}

// Threads parked on a contended monitor, in wait and in a timed wait are
// safe; after the safepoint each gets what it was waiting for.
TEST_F(SafepointTest, ParkedThreadsAreSafe) {
  Obj *contended = newObj(), *waited = newObj(), *timed = newObj();
  Worker a, b, c;
  // Inflate `contended`'s monitor first so that `a` parks on it.
  ASSERT_EQ(enter(contended), JITLOCK_OK);
  a.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(a.thread(), contended), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(a.thread(), contended), JITLOCK_OK);
  });
  b.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(b.thread(), waited), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait(b.thread(), waited), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(b.thread(), waited), JITLOCK_OK);
  });
  c.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(c.thread(), timed), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait_timed(c.thread(), timed, 60'000'000'000ull),
              JITLOCK_OK)
        << "notified before the deadline";
    EXPECT_EQ(jitlock_rt_monitor_exit(c.thread(), timed), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(contended));
  ASSERT_TRUE(waitWaiting(waited));
  ASSERT_TRUE(waitWaiting(timed));
  ASSERT_TRUE(waitUntil([&] {
    return jitlock_rt_thread_state(a.thread()) == JITLOCK_THREAD_BLOCKED &&
           jitlock_rt_thread_state(b.thread()) == JITLOCK_THREAD_BLOCKED &&
           jitlock_rt_thread_state(c.thread()) == JITLOCK_THREAD_BLOCKED;
  }));
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  {
    VmThread vm;
    for (int i = 0; i < 50; ++i) {
      ASSERT_TRUE(vm.stop());
      ASSERT_TRUE(vm.release());
    }
  }
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter(self, waited), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, waited), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_exit(self, waited), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_enter(self, timed), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, timed), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_monitor_exit(self, timed), JITLOCK_OK);
  ASSERT_EQ(exit(contended), JITLOCK_OK);
  EXPECT_TRUE(a.join());
  EXPECT_TRUE(b.join());
  EXPECT_TRUE(c.join());
}

// Waiters, a notifier and a VM thread taking safepoints back to back: every
// notify that found a waiter wakes exactly one waiter, exactly once.
TEST_F(SafepointTest, NoLostOrDuplicatedNotificationAcrossSafepoints) {
  constexpr int kWaiters = 4, kNotifies = 2000;
  Obj *q = newObj();
  std::atomic<int> okReturns{0}, effective{0};
  std::atomic<bool> closing{false};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i)
    waiters.emplace_back([&] {
      jitlock_thread *t = jitlock_rt_attach();
      EXPECT_EQ(jitlock_rt_monitor_enter(t, q), JITLOCK_OK);
      while (!closing.load()) {
        EXPECT_EQ(jitlock_rt_wait(t, q), JITLOCK_OK);
        okReturns.fetch_add(1);
      }
      EXPECT_EQ(jitlock_rt_monitor_exit(t, q), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  std::atomic<bool> vmDone{false};
  std::atomic<unsigned> safepoints{0};
  std::thread vm([&] {
    while (!vmDone.load()) {
      EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
      safepoints.fetch_add(1);
      EXPECT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    }
  });
  // Notify until both enough notifies and enough safepoints happened: on a
  // loaded machine the VM thread may not run at all during the first ones.
  constexpr unsigned kMinSafepoints = 10;
  auto deadline = Clock::now() + kDeadline;
  while ((effective.load() < kNotifies || safepoints.load() < kMinSafepoints) &&
         Clock::now() < deadline) {
    ASSERT_EQ(enter(q), JITLOCK_OK);
    // Exact while we hold q: waiters join the wait set only as owners.
    if (inspect(q).waiting > 0) {
      ASSERT_EQ(jitlock_rt_notify(self, q), JITLOCK_OK);
      effective.fetch_add(1);
    }
    ASSERT_EQ(exit(q), JITLOCK_OK);
    pollAsCompiledCode(self);
  }
  // Drain: every notified waiter returns (the last ones once we release q).
  ASSERT_TRUE(waitUntil([&] {
    pollAsCompiledCode(self);
    return okReturns.load() == effective.load();
  })) << okReturns.load()
      << " returns for " << effective.load()
      << " notifies: a notification was lost";
  ASSERT_EQ(enter(q), JITLOCK_OK);
  closing = true;
  ASSERT_EQ(jitlock_rt_notify_all(self, q), JITLOCK_OK);
  int woken = int(inspect(q).entry_queued);
  ASSERT_EQ(exit(q), JITLOCK_OK);
  {
    NativeScope joining(self);
    for (auto &w : waiters)
      w.join();
    vmDone = true;
    vm.join();
  }
  EXPECT_EQ(okReturns.load(), effective.load() + woken)
      << "a notification was duplicated";
  EXPECT_GE(effective.load(), kNotifies);
  EXPECT_GE(safepoints.load(), kMinSafepoints);
  std::printf("  %d effective notifies, %u safepoints\n", effective.load(),
              safepoints.load());
}

/// What handshake operations record: per round, which targets ran and where.
struct HandshakeLog {
  std::mutex mu;
  std::map<jitlock_thread *, int> runs;
  int ranByRequester = 0, ranByTarget = 0, unsafeWhenRunForIt = 0;
  CompiledCodeMarks *marks = nullptr;

  static void fn(void *ctx, jitlock_thread *target) {
    auto *log = static_cast<HandshakeLog *>(ctx);
    bool onTarget = jitlock_rt_current() == target;
    int state = jitlock_rt_thread_state(target);
    bool inCompiledCode = log->marks && log->marks->isRunning(target);
    std::lock_guard<std::mutex> g(log->mu);
    ++log->runs[target];
    if (onTarget) {
      ++log->ranByTarget;
      return;
    }
    ++log->ranByRequester;
    // Without marks the targets are ones whose state does not change while
    // the handshake runs.
    bool unsafe = log->marks ? inCompiledCode
                             : state != JITLOCK_THREAD_NATIVE &&
                                   state != JITLOCK_THREAD_BLOCKED;
    log->unsafeWhenRunForIt += unsafe;
  }
};

// handshake_all reaches a polling thread, a native one, one parked on a
// monitor, a waiting one and the requester itself: each exactly once.
TEST_F(SafepointTest, HandshakeRunsOncePerTarget) {
  Obj *held = newObj(), *waited = newObj();
  PollingThreads polling(2);
  Worker native, parked, waiting;
  ASSERT_EQ(enter(held), JITLOCK_OK);
  parked.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(parked.thread(), held), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(parked.thread(), held), JITLOCK_OK);
  });
  waiting.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(waiting.thread(), waited), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_wait(waiting.thread(), waited), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(waiting.thread(), waited), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(held));
  ASSERT_TRUE(waitWaiting(waited));
  constexpr int kRounds = 200;
  int ranByTarget = 0, ranByRequester = 0;
  for (int round = 0; round < kRounds; ++round) {
    HandshakeLog log;
    ASSERT_EQ(jitlock_rt_handshake_all(&HandshakeLog::fn, &log), JITLOCK_OK);
    ASSERT_EQ(log.runs.size(), 6u) << "round " << round;
    for (auto &[t, n] : log.runs)
      ASSERT_EQ(n, 1) << "round " << round << ": thread "
                      << jitlock_rt_thread_id(t) << " ran it " << n << " times";
    for (jitlock_thread *t :
         {self, native.thread(), parked.thread(), waiting.thread()})
      EXPECT_EQ(log.runs.count(t), 1u);
    EXPECT_EQ(log.unsafeWhenRunForIt, 0) << "ran for a thread that was unsafe";
    ranByTarget += log.ranByTarget;
    ranByRequester += log.ranByRequester;
  }
  // The requester ran its own each round; the polling threads ran theirs at
  // their polls, or the requester ran them while they were blocked.
  EXPECT_GE(ranByTarget, kRounds);
  EXPECT_GE(ranByRequester, 3 * kRounds) << "native, parked and waiting";

  HandshakeLog one;
  ASSERT_EQ(jitlock_rt_handshake(parked.thread(), &HandshakeLog::fn, &one),
            JITLOCK_OK);
  EXPECT_EQ(one.runs.size(), 1u);
  EXPECT_EQ(one.runs[parked.thread()], 1);
  EXPECT_EQ(jitlock_rt_handshake(parked.thread(), nullptr, nullptr),
            JITLOCK_EINVAL);
  EXPECT_EQ(jitlock_rt_handshake(nullptr, &HandshakeLog::fn, &one),
            JITLOCK_ENOT_ATTACHED);

  ASSERT_EQ(exit(held), JITLOCK_OK);
  ASSERT_EQ(enter(waited), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, waited), JITLOCK_OK);
  ASSERT_EQ(exit(waited), JITLOCK_OK);
  EXPECT_TRUE(parked.join());
  EXPECT_TRUE(waiting.join());
}

// Targets attach and detach while handshakes run: an operation runs once for
// each thread that was attached when the handshake began, and never for a
// thread that is gone.
TEST_F(SafepointTest, HandshakesWithThreadsAttachingAndDetaching) {
  const uint64_t seed = std::random_device{}();
  std::printf("SafepointTest.HandshakesWithThreadsAttachingAndDetaching "
              "seed=%" PRIu64 "\n",
              seed);
  std::atomic<bool> quit{false};
  std::atomic<uint64_t> cycles{0};
  CompiledCodeMarks marks;
  PollingThreads stable(2, &marks);
  std::vector<std::thread> churn;
  for (int i = 0; i < 3; ++i)
    churn.emplace_back([&, i] {
      std::mt19937_64 rng(seed + i);
      while (!quit.load()) {
        jitlock_thread *t = jitlock_rt_attach();
        marks.enter(t);
        for (unsigned n = rng() % 64; n; --n)
          pollAsCompiledCode(t);
        if (rng() % 2) {
          marks.leave(t);
          EXPECT_EQ(jitlock_rt_enter_native(t), JITLOCK_OK);
          std::this_thread::yield();
          EXPECT_EQ(jitlock_rt_leave_native(t), JITLOCK_OK);
          marks.enter(t);
          for (unsigned n = rng() % 8; n; --n)
            pollAsCompiledCode(t);
        }
        marks.leave(t);
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
        cycles.fetch_add(1);
      }
    });
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  int maxTargets = 0;
  for (int round = 0; round < 500; ++round) {
    HandshakeLog log;
    log.marks = &marks;
    ASSERT_EQ(jitlock_rt_handshake_all(&HandshakeLog::fn, &log), JITLOCK_OK);
    for (auto &[t, n] : log.runs)
      ASSERT_EQ(n, 1) << "round " << round;
    ASSERT_GE(log.runs.size(), 3u) << "self and the two stable threads";
    EXPECT_EQ(log.runs.count(self), 1u);
    EXPECT_EQ(log.unsafeWhenRunForIt, 0)
        << "ran on the requester while its target ran compiled code";
    maxTargets = std::max(maxTargets, int(log.runs.size()));
  }
  quit = true;
  for (auto &t : churn)
    t.join();
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
  std::printf("  %" PRIu64 " attach/detach cycles, up to %d targets\n",
              cycles.load(), maxTargets);
  EXPECT_GT(cycles.load(), 0u);
}

// Inside a safepoint a handshake runs each operation on the requester.
TEST_F(SafepointTest, HandshakeInsideASafepointRunsDirectly) {
  PollingThreads mutators(2);
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
  HandshakeLog log;
  ASSERT_EQ(jitlock_rt_handshake_all(&HandshakeLog::fn, &log), JITLOCK_OK);
  EXPECT_EQ(log.runs.size(), 3u);
  EXPECT_EQ(log.ranByRequester, 2) << "the mutators, stopped";
  EXPECT_EQ(log.ranByTarget, 1) << "self, the requester";
  EXPECT_EQ(log.unsafeWhenRunForIt, 0);
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
}

// enumerate_roots and deflate_idle take a safepoint of their own: exact
// roots while other threads lock and unlock.
TEST_F(SafepointTest, EntryPointsTakeTheirOwnSafepoint) {
  constexpr int kThreads = 3;
  std::deque<Obj> objs(kThreads);
  std::atomic<bool> quit{false};
  std::atomic<int> ready{0};
  std::vector<std::thread> lockers;
  for (int i = 0; i < kThreads; ++i)
    lockers.emplace_back([&, i] {
      jitlock_thread *t = jitlock_rt_attach();
      ready.fetch_add(1);
      while (!quit.load()) {
        // Polls only while holding exactly one lock-stack entry.
        EXPECT_EQ(jitlock_rt_monitor_enter(t, &objs[i]), JITLOCK_OK);
        pollAsCompiledCode(t);
        EXPECT_EQ(jitlock_rt_monitor_exit(t, &objs[i]), JITLOCK_OK);
      }
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  ASSERT_TRUE(waitUntil([&] { return ready.load() == kThreads; }));
  struct Count {
    int lockStack = 0;
    static void fn(void *ctx, void **, uint32_t kind, jitlock_thread *) {
      if (kind == JITLOCK_ROOT_LOCK_STACK)
        ++static_cast<Count *>(ctx)->lockStack;
    }
  };
  for (int round = 0; round < 200; ++round) {
    Count c;
    jitlock_rt_enumerate_roots(&Count::fn, &c);
    // Each locker is stopped at its poll, holding its object once.
    ASSERT_EQ(c.lockStack, kThreads) << "round " << round;
    EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
    EXPECT_EQ(jitlock_rt_thread_state(self), JITLOCK_THREAD_MANAGED);
  }
  quit = true;
  {
    NativeScope joining(self);
    for (auto &t : lockers)
      t.join();
  }
}

// A background thread deflates while mutators inflate (by a zero timed wait),
// lock, count and notify: nothing is lost, and the monitors really go.
TEST_F(SafepointTest, BackgroundDeflationWhileMutatorsRun) {
  constexpr int kThreads = 4, kIters = 100000;
  Obj *shared = newObj();
  uint64_t counter = 0; // guarded by shared's lock
  std::atomic<bool> done{false};
  std::atomic<uint64_t> deflated{0}, iterations{0};
  std::thread deflater([&] {
    while (!done.load())
      deflated.fetch_add(jitlock_rt_deflate_idle());
  });
  std::vector<std::thread> mutators;
  for (int i = 0; i < kThreads; ++i)
    mutators.emplace_back([&, i] {
      jitlock_thread *t = jitlock_rt_attach();
      // At least kIters, and on (up to a hundred times as long) until the
      // deflater has taken a monitor from under the running mutators: on a
      // loaded machine it may be descheduled for all of the first kIters.
      int n = 0;
      for (; n < kIters || (deflated.load() == 0 && n < 100 * kIters); ++n) {
        EXPECT_EQ(jitlock_rt_monitor_enter(t, shared), JITLOCK_OK);
        ++counter;
        if (n % 64 == i) {
          // Times out, unless another thread's notifyAll came first.
          int rc = jitlock_rt_wait_timed(t, shared, 0);
          EXPECT_TRUE(rc == JITLOCK_ETIMEDOUT || rc == JITLOCK_OK) << st(rc);
        }
        if (n % 16 == 0)
          EXPECT_EQ(jitlock_rt_notify_all(t, shared), JITLOCK_OK);
        EXPECT_EQ(jitlock_rt_monitor_exit(t, shared), JITLOCK_OK);
        pollAsCompiledCode(t);
      }
      iterations.fetch_add(uint64_t(n));
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  {
    NativeScope joining(self);
    for (auto &m : mutators)
      m.join();
    done = true;
    deflater.join();
  }
  EXPECT_EQ(counter, iterations.load()) << "lost updates";
  EXPECT_GT(deflated.load(), 0u) << "never deflated while the mutators ran";
  jitlock_rt_deflate_idle();
  EXPECT_EQ(stats().monitors_alive, 0u);
  EXPECT_EQ(shared->hdr(), kUnlockedHeader) << "header restored";
  std::printf("  %" PRIu64 " monitors deflated in the background\n",
              deflated.load());
}

// A VM operation cannot be started from inside another: an error code, not
// a hang on the operation lock.
TEST_F(SafepointTest, NestedOperationsAreRefused) {
  struct Probe {
    jitlock_thread *self;
    int begin = -1, handshake = -1, detach = -1;
    size_t deflated = 1;
    static void noop(void *, jitlock_thread *) {}
    static void fn(void *ctx, jitlock_thread *) {
      auto *p = static_cast<Probe *>(ctx);
      p->begin = jitlock_rt_safepoint_begin();
      p->handshake = jitlock_rt_handshake_all(&noop, nullptr);
      p->deflated = jitlock_rt_deflate_idle();
      p->detach = jitlock_rt_detach();
    }
  } probe{self};
  MisuseLog log;
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.misuse_handler = &MisuseLog::handler;
  cfg.misuse_ctx = &log;
  reconfigure(cfg);
  probe.self = self;
  // On the requester's own thread, from a managed requester.
  ASSERT_EQ(jitlock_rt_handshake(self, &Probe::fn, &probe), JITLOCK_OK);
  EXPECT_EQ(probe.begin, JITLOCK_ESTATE);
  EXPECT_EQ(probe.handshake, JITLOCK_ESTATE);
  EXPECT_EQ(probe.deflated, 0u);
  EXPECT_EQ(probe.detach, JITLOCK_ESTATE);
  EXPECT_EQ(jitlock_rt_current(), self) << "still attached";
  // Run by a polling target, for an unattached requester.
  {
    Probe other{nullptr};
    std::atomic<bool> quit{false};
    std::atomic<jitlock_thread *> polling{nullptr};
    std::thread target([&] {
      jitlock_thread *t = jitlock_rt_attach();
      polling = t;
      while (!quit.load())
        pollAsCompiledCode(t);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    ASSERT_TRUE(waitUntil([&] { return polling.load() != nullptr; }));
    ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
    VmThread vm;
    ASSERT_TRUE(vm.run([&] {
      return jitlock_rt_handshake(polling.load(), &Probe::fn, &other);
    }));
    EXPECT_EQ(other.begin, JITLOCK_ESTATE);
    EXPECT_EQ(other.handshake, JITLOCK_ESTATE);
    EXPECT_EQ(other.deflated, 0u);
    EXPECT_EQ(other.detach, JITLOCK_ESTATE);
    quit = true;
    target.join();
    ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
  }
  // Ending the runtime's own safepoint from a callback.
  struct EndFromCallback {
    int rc = -1;
    static void fn(void *ctx, void **, uint32_t, jitlock_thread *) {
      static_cast<EndFromCallback *>(ctx)->rc = jitlock_rt_safepoint_end();
    }
  } end;
  Obj *o = newObj();
  ASSERT_EQ(enter(o), JITLOCK_OK);
  jitlock_rt_enumerate_roots(&EndFromCallback::fn, &end);
  EXPECT_EQ(end.rc, JITLOCK_ESTATE);
  ASSERT_EQ(exit(o), JITLOCK_OK);
  EXPECT_GE(log.count(), 9u);
}

// A thread that exits holding a safepoint releases it: the others run on.
TEST_F(SafepointTest, ExitingWhileHoldingASafepointReleasesIt) {
  PollingThreads mutators(2);
  std::thread holder([] {
    jitlock_thread *t = jitlock_rt_attach();
    EXPECT_EQ(jitlock_rt_enter_native(t), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    // Exits attached and holding it.
  });
  {
    NativeScope joining(self);
    holder.join();
  }
  std::vector<uint64_t> before = mutators.counts();
  EXPECT_TRUE(waitUntil([&] {
    std::vector<uint64_t> now = mutators.counts();
    for (size_t i = 0; i < now.size(); ++i)
      if (now[i] == before[i])
        return false;
    return true;
  })) << "the mutators stayed stopped";
  EXPECT_FALSE(jitlock_rt_in_safepoint());
}

// The same for a thread that never attached (which has no attach-time exit
// hook): its safepoint is released and reported as it exits, and the next
// safepoint begins. A handshake requested by such a thread holds nothing
// once it returns. A regression hangs in a begin: the watchdog ends it.
TEST_F(SafepointTest, UnattachedThreadExitingReleasesItsSafepoint) {
  MisuseLog log;
  reconfigureWithLog(log);
  Watchdog dog(std::chrono::seconds(60), "unattached holder",
               [](const std::string &phase) {
                 std::fprintf(stderr,
                              "SafepointTest.UnattachedThreadExiting: stuck "
                              "in phase '%s': the operation lock was never "
                              "released\n",
                              phase.c_str());
               });
  PollingThreads mutators(2);
  auto mutatorsRun = [&] {
    std::vector<uint64_t> before = mutators.counts();
    return waitUntil([&] {
      std::vector<uint64_t> now = mutators.counts();
      for (size_t i = 0; i < now.size(); ++i)
        if (now[i] == before[i])
          return false;
      return true;
    });
  };
  NativeScope native(self);
  for (int round = 0; round < 20; ++round) {
    size_t reported = log.count();
    std::thread([] {
      EXPECT_EQ(jitlock_rt_current(), nullptr);
      EXPECT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
      // Exits holding it.
    }).join();
    EXPECT_EQ(log.count(), reported + 1) << "round " << round;
    EXPECT_EQ(log.last().status, JITLOCK_ESTATE);
    EXPECT_FALSE(jitlock_rt_in_safepoint());
    ASSERT_TRUE(mutatorsRun()) << "the mutators stayed stopped";
    ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK) << "round " << round;
    ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  }
  dog.phase("unattached handshake");
  std::atomic<unsigned> ran{0};
  std::thread([&] {
    EXPECT_EQ(jitlock_rt_handshake_all(
                  [](void *arg, jitlock_thread *) {
                    static_cast<std::atomic<unsigned> *>(arg)->fetch_add(1);
                  },
                  &ran),
              JITLOCK_OK);
  }).join();
  EXPECT_EQ(ran.load(), 3u) << "the two mutators and this thread";
  ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  EXPECT_TRUE(mutatorsRun());
}

} // namespace
