//===- MisuseTest.cpp - Every misuse returns a code and changes nothing ---===//
//
// Misuse (exit/wait/notify by a non-owner, detach while holding locks, null
// objects, configuration or shutdown at the wrong time) must return its error
// code, call the embedder's misuse handler first, and leave every lock
// exactly as it was.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <cstring>

using namespace jitlock_test;

namespace {

class MisuseTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (!HasFatalFailure())
      reconfigureWithLog(log);
  }

  // Expects exactly one new misuse report with `status` about `obj`.
  void expectReported(size_t before, jitlock_status status, const void *obj,
                      jitlock_thread *thread, bool checkObj = true) {
    ASSERT_EQ(log.count(), before + 1)
        << "the misuse handler must be called exactly once";
    MisuseRecord r = log.last();
    EXPECT_EQ(r.status, status) << st(r.status) << " (" << r.what << ")";
    if (checkObj)
      EXPECT_EQ(r.obj, obj);
    if (thread)
      EXPECT_EQ(r.thread, thread);
  }

  MisuseLog log;
};

// A snapshot of everything misuse must not change.
struct Snapshot {
  uint64_t header;
  jitlock_lock_info info;
  std::vector<void *> stack;
  bool operator==(const Snapshot &o) const {
    return header == o.header && info.state == o.info.state &&
           info.anonymous_owner == o.info.anonymous_owner &&
           info.owner == o.info.owner && info.holds == o.info.holds &&
           info.entry_queued == o.info.entry_queued &&
           info.waiting == o.info.waiting && stack == o.stack;
  }
};
Snapshot snap(const Obj *o, const jitlock_thread *t) {
  return {o->hdr(), inspect(o), lockStack(t)};
}

TEST_F(MisuseTest, ExitOfUnlockedObject) {
  Obj *a = newObj();
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(MisuseTest, ExitOfObjectNotOnTheStackWhileOthersAre) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(b), JITLOCK_OK);
  Snapshot sb = snap(b, self);
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_TRUE(snap(b, self) == sb);
  ASSERT_EQ(exit(b), JITLOCK_OK);
}

TEST_F(MisuseTest, ExitOfObjectFastLockedByAnotherThread) {
  Obj *a = newObj();
  Worker w;
  w.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK); });
  Snapshot before = snap(a, w.thread());
  ASSERT_EQ(before.info.state, JITLOCK_STATE_FAST);
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_TRUE(snap(a, w.thread()) == before) << describe(a);
  EXPECT_EQ(jitlock_rt_owner_of(a), w.thread());
  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK); });
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(MisuseTest, ExitOfMonitorOwnedByAnotherThread) {
  Obj *a = newObj(), *b = newObj();
  Worker w;
  w.call([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, b), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK); // inflates A
  });
  Snapshot before = snap(a, w.thread());
  ASSERT_EQ(before.info.state, JITLOCK_STATE_INFLATED);
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(exit(b), JITLOCK_ENOT_OWNER);
  EXPECT_TRUE(snap(a, w.thread()) == before) << describe(a);
  EXPECT_EQ(inspect(b).owner, w.thread());
  w.call([&] {
    jitlock_thread *t = w.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
}

TEST_F(MisuseTest, ExitOfUnownedMonitor) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  // The monitor may be deflated concurrently, so only ownership is compared.
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.holds, 0u);
  EXPECT_NE(i.state, JITLOCK_STATE_FAST);
  EXPECT_TRUE(lockStack(self).empty());
  // Still fully usable.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(MisuseTest, WaitAndNotifyWithoutOwning) {
  Obj *a = newObj();
  size_t n0 = log.count();
  EXPECT_EQ(jitlock_rt_wait(self, a), JITLOCK_ENOT_OWNER);
  expectReported(n0, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 1000), JITLOCK_ENOT_OWNER);
  expectReported(n0 + 1, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_ENOT_OWNER);
  expectReported(n0 + 2, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_ENOT_OWNER);
  expectReported(n0 + 3, JITLOCK_ENOT_OWNER, a, self);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_UNLOCKED)
      << "misuse must not inflate";
}

TEST_F(MisuseTest, WaitAndNotifyOnObjectsOwnedByAnotherThread) {
  Obj *f = newObj(), *m = newObj(), *x = newObj();
  Worker w;
  w.call([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, f), JITLOCK_OK); // fast
    ASSERT_EQ(jitlock_rt_monitor_enter(t, m), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, x), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, m), JITLOCK_OK); // M inflated
  });
  ASSERT_EQ(inspect(f).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(inspect(m).state, JITLOCK_STATE_INFLATED);
  for (Obj *o : {f, m}) {
    SCOPED_TRACE(stateName(inspect(o).state));
    Snapshot before = snap(o, w.thread());
    size_t n0 = log.count();
    EXPECT_EQ(jitlock_rt_wait(self, o), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_notify(self, o), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_notify_all(self, o), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(log.count(), n0 + 4);
    EXPECT_TRUE(snap(o, w.thread()) == before) << describe(o);
  }
  w.call([&] {
    jitlock_thread *t = w.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, m), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, x), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, m), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, f), JITLOCK_OK);
  });
}

TEST_F(MisuseTest, DetachWhileHoldingFastLock) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  size_t n0 = log.count();
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_EHOLDING_LOCKS);
  expectReported(n0, JITLOCK_EHOLDING_LOCKS, nullptr, self,
                 /*checkObj=*/false);
  EXPECT_EQ(jitlock_rt_current(), self) << "the thread must stay attached";
  EXPECT_EQ(lockStack(self), std::vector<void *>{a});
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(MisuseTest, DetachWhileHoldingMonitor) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  // Only the monitor is held now; the lock stack is empty.
  ASSERT_TRUE(lockStack(self).empty());
  size_t n0 = log.count();
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_EHOLDING_LOCKS);
  ASSERT_GE(log.count(), n0 + 1);
  EXPECT_EQ(log.last().status, JITLOCK_EHOLDING_LOCKS);
  EXPECT_EQ(jitlock_rt_current(), self);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(inspect(a).holds, 1u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(MisuseTest, NullObject) {
  size_t n0 = log.count();
  EXPECT_EQ(jitlock_rt_monitor_enter(self, nullptr), JITLOCK_ENULL);
  expectReported(n0, JITLOCK_ENULL, nullptr, self);
  EXPECT_EQ(jitlock_rt_monitor_exit(self, nullptr), JITLOCK_ENULL);
  expectReported(n0 + 1, JITLOCK_ENULL, nullptr, self);
  EXPECT_EQ(jitlock_rt_wait(self, nullptr), JITLOCK_ENULL);
  expectReported(n0 + 2, JITLOCK_ENULL, nullptr, self);
  EXPECT_EQ(jitlock_rt_wait_timed(self, nullptr, 0), JITLOCK_ENULL);
  expectReported(n0 + 3, JITLOCK_ENULL, nullptr, self);
  EXPECT_EQ(jitlock_rt_notify(self, nullptr), JITLOCK_ENULL);
  expectReported(n0 + 4, JITLOCK_ENULL, nullptr, self);
  EXPECT_EQ(jitlock_rt_notify_all(self, nullptr), JITLOCK_ENULL);
  expectReported(n0 + 5, JITLOCK_ENULL, nullptr, self);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_identity_hash(self, nullptr), 0u);
  EXPECT_EQ(jitlock_rt_identity_hash(nullptr, nullptr), 0u);
  jitlock_lock_info info{};
  EXPECT_NE(jitlock_rt_inspect(nullptr, &info), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(nullptr), nullptr);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, nullptr));
}

TEST_F(MisuseTest, NullObjectWhileHoldingLocksChangesNothing) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Snapshot before = snap(a, self);
  EXPECT_EQ(jitlock_rt_monitor_enter(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_monitor_exit(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_wait(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_notify(self, nullptr), JITLOCK_ENULL);
  EXPECT_TRUE(snap(a, self) == before);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(MisuseTest, ConfigureWhileAttachedIsRejected) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.hash_bits = 0;
  EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_ESTATE);
  // Still the old configuration: hashes are installed.
  Obj *a = newObj();
  EXPECT_NE(jitlock_rt_identity_hash(self, a), 0u);

  // Also while another thread is attached and the caller is not.
  Worker w;
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_ESTATE);
  w.stop();
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  Obj *b = newObj();
  EXPECT_NE(jitlock_rt_identity_hash(self, b), 0u);
}

TEST_F(MisuseTest, InvalidConfigurationIsRejected) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  EXPECT_EQ(cfg.header_offset, 0);
  EXPECT_EQ(cfg.hash_shift, 8u);
  EXPECT_EQ(cfg.hash_bits, 31u);

  jitlock_rt_config bad = cfg;
  bad.hash_shift = 0; // overlaps the lock bits
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  // The handler hears which rule the configuration broke.
  EXPECT_EQ(log.last().what,
            "invalid configuration: the hash field must lie within bits "
            "[2,64) and the header offset must be 8-aligned");
  bad = cfg;
  bad.locking_mode = 99;
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  EXPECT_EQ(log.last().what, "invalid configuration: unknown locking mode");
  bad = cfg;
  bad.hash_shift = 1;
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  bad = cfg;
  bad.hash_shift = 40;
  bad.hash_bits = 31; // runs past bit 63
  EXPECT_EQ(jitlock_rt_configure(&bad), JITLOCK_EINVAL);
  int rc = jitlock_rt_configure(nullptr);
  EXPECT_TRUE(rc == JITLOCK_EINVAL || rc == JITLOCK_ENULL) << st(rc);

  // The rejected configurations changed nothing: the layout is the default.
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  EXPECT_EQ(l.hash_shift, 8u);
  EXPECT_EQ(l.hash_bits, 31u);
  EXPECT_EQ(l.header_offset, 0);
  self = jitlock_rt_attach();
}

TEST_F(MisuseTest, ShutdownWithAttachedThreadIsRejected) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // a monitor exists
  uint64_t alive = stats().monitors_alive;
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_ESTATE);
  EXPECT_EQ(stats().monitors_alive, alive);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(inspect(a).holds, 2u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);

  // Another attached thread also blocks shutdown.
  Worker w;
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_ESTATE);
  w.stop();
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  self = jitlock_rt_attach();
}

TEST_F(MisuseTest, DetachWhenNotAttached) {
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_current(), nullptr);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_ENOT_ATTACHED);
  self = jitlock_rt_attach();
}

TEST_F(MisuseTest, ThreadExitingAttachedHasItsLocksReleased) {
  Obj *f = newObj(), *m = newObj(), *x = newObj();
  jitlock_thread *dead = nullptr;
  size_t n0 = log.count();
  std::thread t([&] {
    jitlock_thread *me = jitlock_rt_attach();
    dead = me;
    EXPECT_EQ(jitlock_rt_monitor_enter(me, f), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(me, m), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(me, x), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(me, m), JITLOCK_OK); // M inflated
    // Ends without detaching.
  });
  t.join();
  EXPECT_GE(log.count(), n0 + 1);
  bool sawHolding = false;
  {
    std::lock_guard<std::mutex> g(log.mu);
    for (size_t k = n0; k < log.records.size(); ++k)
      sawHolding |= log.records[k].status == JITLOCK_EHOLDING_LOCKS;
  }
  EXPECT_TRUE(sawHolding) << "the misuse handler must report the dead thread";
  for (Obj *o : {f, m, x}) {
    EXPECT_EQ(jitlock_rt_owner_of(o), nullptr) << describe(o);
    EXPECT_EQ(inspect(o).holds, 0u) << describe(o);
  }
  EXPECT_EQ(f->hdr(), withTableHash(f, kUnlockedHeader));
  EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader));
  // Everything is usable by others.
  for (Obj *o : {f, m, x})
    ASSERT_EQ(enter(o), JITLOCK_OK);
  for (Obj *o : {x, m, f})
    ASSERT_EQ(exit(o), JITLOCK_OK);
  (void)dead;
}

TEST_F(MisuseTest, OperationWithAnotherThreadsPointer) {
  Obj *a = newObj();
  Worker w;
  size_t n0 = log.count();
  // `self` must be the calling thread.
  EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_ENOT_ATTACHED);
  expectReported(n0, JITLOCK_ENOT_ATTACHED, a, nullptr);
  EXPECT_EQ(jitlock_rt_monitor_enter(nullptr, a), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_wait_timed(w.thread(), a, 0), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_notify(w.thread(), a), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_TRUE(lockStack(w.thread()).empty());
  EXPECT_TRUE(lockStack(self).empty());
  // From a thread that is not attached at all.
  int rc = -1;
  std::thread t([&] { rc = jitlock_rt_monitor_enter(nullptr, a); });
  t.join();
  EXPECT_EQ(rc, JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(MisuseTest, RestoreLocksBadArguments) {
  Obj *a = newObj();
  jitlock_relock_entry e[] = {{a, JITLOCK_RELOCK_ELIDED}};
  EXPECT_EQ(jitlock_rt_restore_locks(self, e, 1, 0x80), JITLOCK_EINVAL);
  EXPECT_EQ(jitlock_rt_restore_locks(self, nullptr, 1, 0), JITLOCK_EINVAL);
  EXPECT_EQ(jitlock_rt_restore_locks(nullptr, e, 1, 0), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(MisuseTest, NonOwnerOnAnonymouslyInflatedObject) {
  // Main holds A fast; a contender inflates it anonymously; a third thread
  // tries exit, wait and notify on it.
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker contender, third;
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  ASSERT_EQ(inspect(a).anonymous_owner, 1u);
  uint64_t hdr = a->hdr();
  size_t n0 = log.count();
  third.call([&] {
    jitlock_thread *t = third.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_wait_timed(t, a, 0), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_notify(t, a), JITLOCK_ENOT_OWNER);
    EXPECT_EQ(jitlock_rt_notify_all(t, a), JITLOCK_ENOT_OWNER);
  });
  EXPECT_EQ(log.count(), n0 + 4);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.anonymous_owner, 1u) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, hdr));
  EXPECT_FALSE(contender.finished());
  EXPECT_EQ(lockStack(self), std::vector<void *>{a});
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(contender.join());
}

TEST_F(MisuseTest, DyingThreadHandsContendedLockOver) {
  // A thread fast-locks A and B, a contender queues on A, then the thread
  // ends without detaching: its locks are released and the contender runs.
  Obj *a = newObj(), *b = newObj();
  std::mutex mu;
  std::condition_variable cv;
  bool locked = false, go = false;
  std::thread dying([&] {
    jitlock_thread *t = jitlock_rt_attach();
    EXPECT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_enter(t, b), JITLOCK_OK);
    std::unique_lock<std::mutex> g(mu);
    locked = true;
    cv.notify_all();
    cv.wait(g, [&] { return go; });
  });
  {
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return locked; });
  }
  Worker contender;
  std::atomic<int> rc{-1};
  contender.post([&] {
    rc = jitlock_rt_monitor_enter(contender.thread(), a);
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  size_t n0 = log.count();
  {
    std::lock_guard<std::mutex> g(mu);
    go = true;
    cv.notify_all();
  }
  dying.join();
  ASSERT_TRUE(contender.join()) << describe(a);
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_GE(log.count(), n0 + 1);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  EXPECT_EQ(jitlock_rt_owner_of(b), nullptr);
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

TEST_F(MisuseTest, NoHandlerStillReturnsCodes) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  reconfigure(cfg);
  Obj *a = newObj();
  size_t n0 = log.count();
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_monitor_enter(self, nullptr), JITLOCK_ENULL);
  EXPECT_EQ(log.count(), n0) << "the handler was uninstalled";
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_EHOLDING_LOCKS);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

} // namespace

// JIT code run on a thread that never attached must not touch memory: the
// detached structure's lock stack reads as full and empty, so every inline
// path goes to the runtime, which refuses.
TEST(DetachedThreadTest, CodeThreadOfDetachedThreadForcesSlowPathAndRefuses) {
  std::thread Worker([] {
    jitlock_rt_layout L;
    jitlock_rt_get_layout(&L);
    jitlock_thread *T = jitlock_rt_code_thread();
    ASSERT_NE(T, nullptr);
    EXPECT_EQ(jitlock_rt_current(), nullptr);
    auto *Base = reinterpret_cast<const char *>(T);
    uint32_t Top;
    std::memcpy(&Top, Base + L.lock_stack_top_offset, sizeof(Top));
    EXPECT_EQ(Top, L.lock_stack_end_offset) << "E2 must see a full stack";
    void *LastSlot;
    std::memcpy(&LastSlot, Base + L.lock_stack_end_offset - 8,
                sizeof(LastSlot));
    EXPECT_EQ(LastSlot, nullptr) << "X1 must not match any object";
    std::atomic<uint64_t> Header{1};
    EXPECT_EQ(jitlock_rt_monitor_enter(T, &Header), JITLOCK_ENOT_ATTACHED);
    EXPECT_EQ(Header.load(), 1u);

    // Attach, lock, unlock, detach: the structure reads as detached again.
    ASSERT_EQ(jitlock_rt_attach(), T);
    ASSERT_EQ(jitlock_rt_monitor_enter(T, &Header), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(T, &Header), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    std::memcpy(&Top, Base + L.lock_stack_top_offset, sizeof(Top));
    EXPECT_EQ(Top, L.lock_stack_end_offset);
    std::memcpy(&LastSlot, Base + L.lock_stack_end_offset - 8,
                sizeof(LastSlot));
    EXPECT_EQ(LastSlot, nullptr);
  });
  Worker.join();
}

// A thread-local destructor that runs after the runtime's exit hook must not
// attach again: the thread would stay registered after it died, and its
// stack's guard zones would stay protected for the next thread on that stack.
namespace {
std::atomic<int> LateAttachResult{-1};
std::atomic<int> LateAttachMisuse{-1};

void recordLateMisuse(void *, jitlock_status Status, jitlock_thread *, void *,
                      const char *) {
  LateAttachMisuse = Status;
}

struct AttachesWhenDestroyed {
  bool Touched = false;
  ~AttachesWhenDestroyed() {
    LateAttachResult = jitlock_rt_attach() != nullptr;
  }
};
thread_local AttachesWhenDestroyed LateAttacher;
} // namespace

TEST(DetachedThreadTest, AttachAfterTheExitHookIsRefused) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = recordLateMisuse;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  jitlock_rt_stats Before;
  jitlock_rt_get_stats(&Before);
  std::thread Worker([] {
    // Constructed before the first attach registers the exit hook, so it is
    // destroyed after the hook runs.
    LateAttacher.Touched = true;
    ASSERT_NE(jitlock_rt_attach(), nullptr);
  });
  Worker.join();
  EXPECT_EQ(LateAttachResult.load(), 0) << "late attach was accepted";
  EXPECT_EQ(LateAttachMisuse.load(), JITLOCK_ESTATE);
  // Nothing is left attached: the runtime can be reconfigured.
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}
