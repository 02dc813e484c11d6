//===- WaitNotifyTest.cpp - wait, notify and notifyAll -------------------===//
//
// wait inflates a fast-locked object and restores the recursion depth;
// notify on a fast-locked object the caller holds is a no-op; wait returns
// JITLOCK_OK only when notified and JITLOCK_ETIMEDOUT on timeout.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

using namespace jitlock_test;

namespace {

class WaitNotifyTest : public RuntimeTest {};

TEST_F(WaitNotifyTest, TimedWaitZeroInflatesAndKeepsRecursion) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // [B A A]
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  jitlock_rt_stats s0 = stats();
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 0), JITLOCK_ETIMEDOUT);
  jitlock_rt_stats s1 = stats();
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.anonymous_owner, 0u);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(i.waiting, 0u);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(s1.inflations - s0.inflations, 1u);
  EXPECT_GE(s1.waits - s0.waits, 1u);

  // Waiting again on the now inflated object.
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 1000 * 1000), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(a).owner, self);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

TEST_F(WaitNotifyTest, NotifyOnFastLockedIsNoOp) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  jitlock_rt_stats s1 = stats();
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST) << "notify must not inflate";
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader & ~kLockMask));
  EXPECT_EQ(s1.inflations, s0.inflations);
  EXPECT_EQ(s1.monitors_alive, s0.monitors_alive);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, a}));
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(WaitNotifyTest, NotifyWithoutWaitersOnMonitor) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).holds, 2u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(WaitNotifyTest, WaitOnRecursiveEntryBelowTheTop) {
  // [A A B]: waiting on A moves both of A's entries into the monitor.
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 0), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
}

TEST_F(WaitNotifyTest, NotifyOnFastLockedBelowTheTopIsNoOp) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, b}));
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(WaitNotifyTest, WaitReleasesOnlyTheWaitedObject) {
  // The waiter keeps B while waiting on A: a thread entering B blocks, a
  // thread entering A gets in.
  Obj *a = newObj(), *b = newObj();
  Worker waiter, other;
  std::atomic<int> wrc{-1};
  waiter.post([&] {
    jitlock_thread *t = waiter.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, b), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    wrc = jitlock_rt_wait(t, a);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, b), JITLOCK_OK);
  });
  ASSERT_TRUE(waitWaiting(a)) << describe(a);
  EXPECT_EQ(jitlock_rt_owner_of(b), waiter.thread());
  other.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(other.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_notify(other.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(other.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waiter.join());
  EXPECT_EQ(wrc.load(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(b), nullptr);
}

TEST_F(WaitNotifyTest, WaitNotifyHandshake) {
  Obj *a = newObj();
  Worker w;
  std::atomic<int> rc{-1};
  std::atomic<uint64_t> holdsAfter{0};
  w.post([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK); // fast
    rc = jitlock_rt_wait(t, a);
    holdsAfter = inspect(a).holds;
    EXPECT_EQ(inspect(a).owner, t);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  // A waiter joins the wait set and then releases the monitor: wait for
  // both (the snapshot in between is a legitimate state).
  ASSERT_TRUE(waitUntil([&] {
    jitlock_lock_info i = inspect(a);
    return i.waiting >= 1 && i.owner == nullptr;
  })) << "worker never entered the wait set and released A: "
      << describe(a);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.owner, nullptr) << "a waiter releases the monitor";
  EXPECT_EQ(i.holds, 0u);
  EXPECT_EQ(i.waiting, 1u);
  EXPECT_FALSE(jitlock_rt_holds_lock(w.thread(), a));

  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_TRUE(lockStack(self).empty()) << "an inflated enter pushes nothing";
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_GE(stats().notifies - s0.notifies, 1u);
  EXPECT_EQ(inspect(a).waiting, 0u) << describe(a);
  EXPECT_FALSE(w.finished()) << "the waiter returned while main holds A";
  EXPECT_EQ(rc.load(), -1);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join()) << "notified waiter did not return: " << describe(a);
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(holdsAfter.load(), 1u);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
}

TEST_F(WaitNotifyTest, WaitRestoresRecursionDepth) {
  Obj *a = newObj();
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] {
    jitlock_thread *t = w.thread();
    for (int k = 0; k < 3; ++k)
      ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    rc = jitlock_rt_wait(t, a);
    EXPECT_EQ(inspect(a).holds, 3u);
    EXPECT_EQ(inspect(a).owner, t);
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_FALSE(jitlock_rt_holds_lock(t, a));
  });
  ASSERT_TRUE(waitWaiting(a)) << describe(a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
}

TEST_F(WaitNotifyTest, NotifyWakesLongestWaiterOnlyAndNoSpuriousReturn) {
  Obj *a = newObj();
  Worker w1, w2;
  std::atomic<int> rc1{-1}, rc2{-1};
  auto waiter = [&](Worker &w, std::atomic<int> &rc) {
    return [&] {
      jitlock_thread *t = w.thread();
      ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
      rc = jitlock_rt_wait(t, a);
      EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    };
  };
  w1.post(waiter(w1, rc1));
  ASSERT_TRUE(waitWaiting(a, 1)) << describe(a);
  w2.post(waiter(w2, rc2));
  ASSERT_TRUE(waitWaiting(a, 2)) << describe(a);

  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).waiting, 1u) << describe(a);
  ASSERT_EQ(exit(a), JITLOCK_OK);

  ASSERT_TRUE(w1.join()) << "the longest waiter was not woken: " << describe(a);
  EXPECT_EQ(rc1.load(), JITLOCK_OK);
  // One notify chose one waiter: the other is still in the wait set.
  EXPECT_EQ(inspect(a).waiting, 1u) << describe(a);
  EXPECT_FALSE(w2.finished()) << "a second waiter returned without a notify";
  EXPECT_EQ(rc2.load(), -1);

  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w2.join());
  EXPECT_EQ(rc2.load(), JITLOCK_OK);
  EXPECT_EQ(inspect(a).waiting, 0u);
}

TEST_F(WaitNotifyTest, NotifyAllWakesEveryWaiter) {
  Obj *a = newObj();
  constexpr int N = 3;
  std::vector<std::unique_ptr<Worker>> ws;
  std::vector<std::atomic<int>> rcs(N);
  for (int k = 0; k < N; ++k) {
    rcs[k] = -1;
    ws.push_back(std::make_unique<Worker>());
    Worker *w = ws.back().get();
    std::atomic<int> *rc = &rcs[k];
    w->post([w, rc, a] {
      jitlock_thread *t = w->thread();
      ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
      *rc = jitlock_rt_wait(t, a);
      EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    });
  }
  ASSERT_TRUE(waitWaiting(a, N)) << describe(a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).waiting, 0u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  for (int k = 0; k < N; ++k) {
    ASSERT_TRUE(ws[k]->join()) << k;
    EXPECT_EQ(rcs[k].load(), JITLOCK_OK) << k;
  }
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
}

TEST_F(WaitNotifyTest, TimedWaitReturnsOkWhenNotified) {
  Obj *a = newObj();
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    // An hour: only a notify can end this wait within the test.
    rc = jitlock_rt_wait_timed(t, a, 3600ull * 1000 * 1000 * 1000);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitWaiting(a)) << describe(a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
}

TEST_F(WaitNotifyTest, HugeTimeoutsDoNotOverflow) {
  Obj *a = newObj();
  for (uint64_t timeout :
       {UINT64_MAX, uint64_t(INT64_MAX), uint64_t(1) << 63}) {
    SCOPED_TRACE(testing::Message() << "timeout " << timeout);
    Worker w;
    std::atomic<int> rc{-1};
    w.post([&] {
      jitlock_thread *t = w.thread();
      ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
      rc = jitlock_rt_wait_timed(t, a, timeout);
      EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    });
    ASSERT_TRUE(
        waitUntil([&] { return inspect(a).waiting >= 1 || w.finished(); }));
    ASSERT_FALSE(w.finished()) << "timed wait returned at once: " << st(rc);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_TRUE(w.join());
    EXPECT_EQ(rc.load(), JITLOCK_OK);
  }
}

TEST_F(WaitNotifyTest, TimedWaitTimesOutWithoutNotify) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 2 * 1000 * 1000), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(inspect(a).holds, 1u);
  EXPECT_EQ(inspect(a).waiting, 0u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(WaitNotifyTest, WaitOnAnonymouslyOwnedObjectLetsContenderIn) {
  // Main fast-locks A; a contender inflates it anonymously; main then waits,
  // which must fix the owner, release A to the contender, and re-acquire.
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w;
  std::atomic<int> rc{-1};
  ASSERT_TRUE(contendAndQueue(w, a, &rc)) << describe(a);
  ASSERT_EQ(inspect(a).anonymous_owner, 1u) << describe(a);
  // Wait without a notify until the contender has been through.
  bool ok = waitUntil([&] {
    int wrc = jitlock_rt_wait_timed(self, a, 1000 * 1000);
    EXPECT_EQ(wrc, JITLOCK_ETIMEDOUT);
    jitlock_lock_info i = inspect(a);
    EXPECT_EQ(i.owner, self);
    EXPECT_EQ(i.holds, 1u);
    EXPECT_EQ(i.anonymous_owner, 0u);
    return w.finished() || wrc != JITLOCK_ETIMEDOUT;
  });
  ASSERT_TRUE(ok) << "the contender never got A while main waited";
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
}

TEST_F(WaitNotifyTest, WaiterAndContenderBothProceed) {
  // One thread waits, another blocks in enter; main notifies and exits.
  Obj *a = newObj();
  Worker waiter, enterer;
  std::atomic<int> wrc{-1}, erc{-1};
  waiter.post([&] {
    jitlock_thread *t = waiter.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    wrc = jitlock_rt_wait(t, a);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitWaiting(a)) << describe(a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  enterer.post([&] {
    erc = jitlock_rt_monitor_enter(enterer.thread(), a);
    EXPECT_EQ(jitlock_rt_monitor_exit(enterer.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  ASSERT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(waiter.join());
  ASSERT_TRUE(enterer.join());
  EXPECT_EQ(wrc.load(), JITLOCK_OK);
  EXPECT_EQ(erc.load(), JITLOCK_OK);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.waiting, 0u);
  EXPECT_EQ(i.entry_queued, 0u);
}

} // namespace
