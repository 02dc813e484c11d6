//===- HeavyModeTest.cpp - The heavy-monitor locking mode -----------------===//
//
// With locking_mode = JITLOCK_LOCKING_HEAVY, a runtime enter of an object
// without a monitor inflates it (H1 in Synchronizer.cpp). Everything else
// keeps its contract: recursion, unstructured exits, wait/notify, hashes,
// restore-locks, misuse codes. Objects fast-locked by inline code lowered for
// the lightweight mode must keep working: InlineCode below performs those
// inline steps (E1-E5, M1-M2, X1-X4, N1-N3) by hand through the layout, as
// JIT code does, and calls the runtime where they do.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <random>
#include <set>

using namespace jitlock_test;

namespace {

constexpr uint64_t kFastHeader = kUnlockedHeader & ~kLockMask;

std::atomic_ref<uint64_t> word(const void *Base, int64_t Offset) {
  return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(
      const_cast<char *>(static_cast<const char *>(Base)) + Offset));
}

/// The inline fast paths, step by step as the protocol states them. The
/// header loads (E1, N1) acquire where the protocol relies on the address
/// dependency (consume), which ThreadSanitizer does not model.
struct InlineCode {
  enum Path {
    FastLock,          // E5
    FastRecursion,     // E4
    MonitorAcquire,    // M1
    MonitorRecursion,  // M2
    FastUnlock,        // X4
    FastRecursiveExit, // X3
    MonitorRelease,    // N3
    Runtime            // the slow path, which returned JITLOCK_OK
  };

  jitlock_rt_layout L{};
  InlineCode() { jitlock_rt_get_layout(&L); }

  std::atomic_ref<uint64_t> header(void *O) const {
    return word(O, L.header_offset);
  }
  std::atomic_ref<uint32_t> top(jitlock_thread *T) const {
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t *>(
        reinterpret_cast<char *>(T) + L.lock_stack_top_offset));
  }
  uint64_t slot(jitlock_thread *T, uint32_t Offset) const {
    return word(T, Offset).load(std::memory_order_relaxed);
  }
  static Path slow(int Rc) {
    EXPECT_EQ(Rc, JITLOCK_OK) << st(Rc);
    return Runtime;
  }

  Path enter(jitlock_thread *T, void *O) const {
    uint64_t H = header(O).load(std::memory_order_acquire); // E1
    uint32_t Top = top(T).load(std::memory_order_relaxed);
    if (Top == L.lock_stack_end_offset) // E2
      return slow(jitlock_rt_monitor_enter(T, O));
    if ((H & L.lock_mask) == L.monitor_value) { // E3, M1
      char *M = inlineMonitor(L, T, O, H);
      if (!M)
        return slow(jitlock_rt_monitor_enter(T, O));
      uint64_t Expected = 0;
      if (word(M, L.monitor_owner_offset)
              .compare_exchange_strong(Expected, uint64_t(uintptr_t(T)),
                                       std::memory_order_acquire,
                                       std::memory_order_relaxed))
        return MonitorAcquire;
      if (Expected == uint64_t(uintptr_t(T))) { // M2
        auto R = word(M, L.monitor_recursions_offset);
        R.store(R.load(std::memory_order_relaxed) + 1,
                std::memory_order_relaxed);
        return MonitorRecursion;
      }
      return slow(jitlock_rt_monitor_enter(T, O));
    }
    if ((H & L.lock_mask) == L.lock_mask) // E3
      return slow(jitlock_rt_monitor_enter(T, O));
    if (slot(T, Top - 8) == uint64_t(uintptr_t(O))) { // E4
      push(T, Top, O);
      return FastRecursion;
    }
    uint64_t Expected = (H & ~L.lock_mask) | L.unlocked_value; // E5
    if (header(O).compare_exchange_strong(
            Expected, (H & ~L.lock_mask) | L.locked_value,
            std::memory_order_acquire, std::memory_order_relaxed)) {
      push(T, Top, O);
      return FastLock;
    }
    return slow(jitlock_rt_monitor_enter(T, O));
  }

  Path exit(jitlock_thread *T, void *O) const {
    uint32_t Top = top(T).load(std::memory_order_relaxed);
    if (slot(T, Top - 8) == uint64_t(uintptr_t(O))) {   // X1
      top(T).store(Top - 8, std::memory_order_relaxed); // X2
      if (slot(T, Top - 16) == uint64_t(uintptr_t(O)))  // X3
        return FastRecursiveExit;
      uint64_t H = header(O).load(std::memory_order_relaxed); // X4
      if ((H & L.lock_mask) == L.locked_value &&
          header(O).compare_exchange_strong(
              H, (H & ~L.lock_mask) | L.unlocked_value,
              std::memory_order_release, std::memory_order_relaxed))
        return FastUnlock;
      top(T).store(Top, std::memory_order_relaxed); // push back
      return slow(jitlock_rt_monitor_exit(T, O));
    }
    uint64_t H = header(O).load(std::memory_order_acquire); // N1
    if ((H & L.lock_mask) != L.monitor_value)
      return slow(jitlock_rt_monitor_exit(T, O));
    char *M = inlineMonitor(L, T, O, H);
    if (!M)
      return slow(jitlock_rt_monitor_exit(T, O));
    if (word(M, L.monitor_owner_offset).load(std::memory_order_relaxed) !=
            uint64_t(uintptr_t(T)) ||
        word(M, L.monitor_recursions_offset).load(std::memory_order_relaxed))
      return slow(jitlock_rt_monitor_exit(T, O)); // N2
    // N3: release, a full fence (right under either inflated exit), then the
    // entry count; threads queued: the runtime wakes one.
    word(M, L.monitor_owner_offset).store(0, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::atomic_ref<uint32_t> Queued(
        *reinterpret_cast<uint32_t *>(M + L.monitor_entry_count_offset));
    if (Queued.load(std::memory_order_relaxed) != 0)
      EXPECT_EQ(jitlock_rt_monitor_exit_queued_slow(T, O), JITLOCK_OK);
    return MonitorRelease;
  }

private:
  void push(jitlock_thread *T, uint32_t Top, void *O) const {
    word(T, Top).store(uint64_t(uintptr_t(O)), std::memory_order_relaxed);
    top(T).store(Top + 8, std::memory_order_relaxed);
  }
};

class HeavyModeTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    if (HasFatalFailure())
      return;
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
    cfg.misuse_handler = MisuseLog::handler;
    cfg.misuse_ctx = &log;
    reconfigure(cfg);
    jitlock_rt_layout l;
    jitlock_rt_get_layout(&l);
    ASSERT_EQ(l.locking_mode, uint32_t(JITLOCK_LOCKING_HEAVY));
    // The inline code reads the layout of the configuration it runs under.
    code.L = l;
  }

  static uint64_t monitorHeader(const Obj *o) { return o->hdr() & ~kLockMask; }

  // Expects `o` inflated and owned by `t` with `holds` holds.
  void expectOwned(Obj *o, jitlock_thread *t, uint64_t holds) {
    jitlock_lock_info i = inspect(o);
    EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(o);
    EXPECT_EQ(i.anonymous_owner, 0u);
    EXPECT_EQ(i.owner, t) << describe(o);
    EXPECT_EQ(i.holds, holds) << describe(o);
    EXPECT_EQ(jitlock_rt_owner_of(o), t);
    EXPECT_TRUE(jitlock_rt_holds_lock(t, o));
  }
  void expectIdleMonitor(Obj *o) {
    jitlock_lock_info i = inspect(o);
    EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(o);
    EXPECT_EQ(i.owner, nullptr);
    EXPECT_EQ(i.holds, 0u);
    EXPECT_EQ(i.entry_queued, 0u);
    EXPECT_EQ(i.waiting, 0u);
  }

  MisuseLog log;
  InlineCode code;
};

TEST_F(HeavyModeTest, EnterOfUnlockedObjectInflates) {
  Obj *a = newObj();
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s1 = stats();
  EXPECT_EQ(a->lowBits(), kMonitor);
  expectOwned(a, self, 1);
  EXPECT_TRUE(lockStack(self).empty()) << "heavy mode never pushes";
  EXPECT_EQ(s1.inflations - s0.inflations, 1u);
  EXPECT_EQ(s1.monitor_enters - s0.monitor_enters, 1u);
  EXPECT_EQ(s1.fast_locks - s0.fast_locks, 0u);
  EXPECT_EQ(s1.monitors_alive - s0.monitors_alive, 1u);
  // The unlocked header, embedder bits included, is displaced.
  expectHashOfInflated(a);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  expectIdleMonitor(a);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);

  // The monitor stays: the next enter uses it without inflating again.
  uint64_t m = monitorHeader(a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(monitorHeader(a), m);
  EXPECT_EQ(stats().inflations, s1.inflations);
  ASSERT_EQ(exit(a), JITLOCK_OK);

  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(stats().monitors_alive, s0.monitors_alive);
  EXPECT_EQ(log.count(), 0u);
}

TEST_F(HeavyModeTest, RecursionCountsInTheMonitor) {
  Obj *a = newObj();
  jitlock_rt_stats s0 = stats();
  for (uint64_t n = 1; n <= 20; ++n) {
    ASSERT_EQ(enter(a), JITLOCK_OK);
    expectOwned(a, self, n);
  }
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(stats().inflations - s0.inflations, 1u);
  EXPECT_EQ(stats().recursive_locks, s0.recursive_locks)
      << "recursion on a monitor is no lock stack push";
  for (uint64_t n = 20; n > 1; --n) {
    ASSERT_EQ(exit(a), JITLOCK_OK);
    expectOwned(a, self, n - 1);
  }
  ASSERT_EQ(exit(a), JITLOCK_OK);
  expectIdleMonitor(a);
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(log.count(), 1u);
}

TEST_F(HeavyModeTest, UnstructuredExitsAndDeepNesting) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK); // lock A; lock B; unlock A; unlock B
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  expectOwned(b, self, 1);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, b));

  // Deeper than the lock stack: every object has its own monitor.
  std::vector<Obj *> objs;
  for (int i = 0; i < 3 * int(kCapacity); ++i) {
    objs.push_back(newObj());
    ASSERT_EQ(enter(objs.back()), JITLOCK_OK);
  }
  EXPECT_TRUE(lockStack(self).empty());
  for (Obj *o : objs)
    expectOwned(o, self, 1);
  // Release in a scrambled order.
  std::vector<Obj *> order(objs);
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  for (Obj *o : order)
    ASSERT_EQ(exit(o), JITLOCK_OK);
  for (Obj *o : objs)
    expectIdleMonitor(o);
  EXPECT_EQ(jitlock_rt_deflate_idle(), objs.size() + 2);
  for (Obj *o : objs)
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
}

TEST_F(HeavyModeTest, ContendedEnterBlocksAndHandsOver) {
  Obj *a = newObj();
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w;
  std::atomic<int> phase{0};
  w.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
    phase = 1;
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  EXPECT_EQ(phase.load(), 0);
  expectOwned(a, self, 1);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(phase.load(), 1);
  expectIdleMonitor(a);
  EXPECT_EQ(stats().inflations - s0.inflations, 1u);
}

TEST_F(HeavyModeTest, WaitNotifyAndTimedWait) {
  Obj *a = newObj();
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] {
    jitlock_thread *t = w.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
    rc = jitlock_rt_wait(t, a);
    expectOwned(a, t, 2);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  // In the wait set first, then the monitor is released; after that the
  // waiter only touches its own node until it is notified.
  ASSERT_TRUE(waitUntil([&] {
    jitlock_lock_info i = inspect(a);
    return i.waiting == 1 && i.owner == nullptr;
  })) << describe(a);
  // An idle-looking monitor with a waiter is not deflated.
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  EXPECT_EQ(rc.load(), -1);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);

  // Timed waits that nobody notifies, with the count kept.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 0), JITLOCK_ETIMEDOUT);
  expectOwned(a, self, 2);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 2000000), JITLOCK_ETIMEDOUT);
  expectOwned(a, self, 2);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(HeavyModeTest, MisuseCodesChangeNothing) {
  Obj *a = newObj(), *b = newObj();
  // Exit, wait and notify of an unlocked object: no monitor is created.
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_wait(self, a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(stats().monitors_alive, 0u);
  EXPECT_EQ(log.count(), 4u);
  EXPECT_EQ(log.last().status, JITLOCK_ENOT_OWNER);

  // A monitor another thread owns.
  Worker w;
  w.call([&] { ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), b), 0); });
  log.clear();
  EXPECT_EQ(exit(b), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_wait_timed(self, b, 0), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(jitlock_rt_notify(self, b), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(log.count(), 3u);
  expectOwned(b, w.thread(), 1);

  // Null objects and a foreign thread pointer.
  EXPECT_EQ(enter(nullptr), JITLOCK_ENULL);
  EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));

  // Detaching while holding a monitor is refused and keeps the hold.
  w.call([&] {
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_EHOLDING_LOCKS);
    EXPECT_EQ(jitlock_rt_current(), w.thread());
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), b), JITLOCK_OK);
  });
  EXPECT_EQ(log.last().status, JITLOCK_EHOLDING_LOCKS);
  expectIdleMonitor(b);
}

TEST_F(HeavyModeTest, HashSurvivesInflationAndDeflation) {
  // Installed before inflation.
  Obj *a = newObj();
  uint64_t ha = jitlock_rt_identity_hash(self, a);
  ASSERT_NE(ha, 0u);
  uint64_t hashed = a->hdr();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(a->lowBits(), kMonitor);
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), ha);
  EXPECT_EQ(jitlock_rt_peek_hash(a), ha);
  ASSERT_EQ(exit(a), JITLOCK_OK);

  // Installed while inflated, into the displaced header.
  Obj *b = newObj();
  ASSERT_EQ(enter(b), JITLOCK_OK);
  uint64_t hb = jitlock_rt_identity_hash(self, b);
  ASSERT_NE(hb, 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(b), hb);
  ASSERT_EQ(exit(b), JITLOCK_OK);

  EXPECT_EQ(jitlock_rt_deflate_idle(), 2u);
  EXPECT_EQ(a->hdr(), withTableHash(a, hashed));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader |
                                           ((hb << kHashShift) & kHashMask)));
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), ha);
  EXPECT_EQ(jitlock_rt_identity_hash(self, b), hb);

  // Inflated again, deflated again: still the same.
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_peek_hash(b), hb);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(jitlock_rt_peek_hash(b), hb);
  EXPECT_EQ(b->lowBits(), kUnlocked);
}

using Relock = std::vector<jitlock_relock_entry>;
jitlock_relock_entry held(Obj *o) { return {o, JITLOCK_RELOCK_HELD}; }
jitlock_relock_entry elided(Obj *o) { return {o, JITLOCK_RELOCK_ELIDED}; }

TEST_F(HeavyModeTest, RestoreLocksInflatesElidedLocks) {
  Obj *a = newObj(), *b = newObj();
  Relock frame{elided(a), elided(b), elided(a)};
  ASSERT_EQ(jitlock_rt_restore_locks(self, frame.data(), frame.size(), 0),
            JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  expectOwned(a, self, 2);
  expectOwned(b, self, 1);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_FALSE(jitlock_rt_holds_lock(self, b));

  // Not the youngest frame: holds go to monitors as in lightweight mode.
  Obj *c = newObj();
  ASSERT_EQ(enter(c), JITLOCK_OK);
  Relock older{held(c), elided(c), elided(a)};
  ASSERT_EQ(jitlock_rt_restore_locks(self, older.data(), older.size(),
                                     JITLOCK_RELOCK_NOT_YOUNGEST),
            JITLOCK_OK);
  expectOwned(c, self, 2);
  expectOwned(a, self, 1);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(c), JITLOCK_OK);
  ASSERT_EQ(exit(c), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 3u);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
}

TEST_F(HeavyModeTest, RestoreLocksKeepsInlineFastLocks) {
  // The frame's held lock came from inline code (fast); its elided
  // re-entry stays on the lock stack, the new object gets a monitor.
  Obj *x = newObj(), *y = newObj();
  ASSERT_EQ(code.enter(self, x), InlineCode::FastLock);
  Relock frame{held(x), elided(x), elided(y)};
  ASSERT_EQ(jitlock_rt_restore_locks(self, frame.data(), frame.size(), 0),
            JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{x, x}));
  EXPECT_EQ(inspect(x).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(x).holds, 2u);
  expectOwned(y, self, 1);
  EXPECT_EQ(code.exit(self, y), InlineCode::MonitorRelease);
  EXPECT_EQ(code.exit(self, x), InlineCode::FastRecursiveExit);
  EXPECT_EQ(code.exit(self, x), InlineCode::FastUnlock);
  EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader));
}

TEST_F(HeavyModeTest, RestoreOnBehalfRollsBackWhenBusy) {
  Obj *a = newObj(), *busy = newObj();
  Worker w;
  ASSERT_EQ(enter(busy), JITLOCK_OK);
  Relock frame{elided(a), elided(busy)};
  EXPECT_EQ(jitlock_rt_restore_locks(w.thread(), frame.data(), frame.size(), 0),
            JITLOCK_EBUSY);
  EXPECT_FALSE(jitlock_rt_holds_lock(w.thread(), a));
  EXPECT_TRUE(lockStack(w.thread()).empty());
  // a may keep an idle monitor from the attempt; deflation removes it.
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.holds, 0u);
  ASSERT_EQ(exit(busy), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_restore_locks(w.thread(), frame.data(), frame.size(), 0),
            JITLOCK_OK);
  expectOwned(a, w.thread(), 1);
  expectOwned(busy, w.thread(), 1);
  w.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), busy), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
  });
  EXPECT_EQ(jitlock_rt_deflate_idle(), 2u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(busy->hdr(), withTableHash(busy, kUnlockedHeader));
}

//===-- Mixed: inline code lowered for lightweight mode -------------------===//

TEST_F(HeavyModeTest, InlineFastLocksMixWithHeavyRuntime) {
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(code.enter(self, a), InlineCode::FastLock);
  EXPECT_EQ(a->hdr(), withTableHash(a, kFastHeader));
  // Adjacent re-entry through the runtime stays a fast lock.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, a}));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(stats().inflations, s0.inflations);
  // A B A through the runtime inflates A, all three holds in the monitor.
  ASSERT_EQ(code.enter(self, b), InlineCode::FastLock);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  expectOwned(a, self, 3);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});
  // A new object through the runtime inflates (H1); b stays fast.
  ASSERT_EQ(enter(c), JITLOCK_OK);
  expectOwned(c, self, 1);
  EXPECT_EQ(code.enter(self, b), InlineCode::FastRecursion);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{b, b}));
  EXPECT_EQ(stats().inflations - s0.inflations, 2u);

  EXPECT_EQ(code.exit(self, c), InlineCode::MonitorRelease);
  EXPECT_EQ(code.exit(self, b), InlineCode::FastRecursiveExit);
  EXPECT_EQ(code.exit(self, a), InlineCode::Runtime); // N2: recursions
  expectOwned(a, self, 2);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
  EXPECT_EQ(code.exit(self, a), InlineCode::Runtime);
  EXPECT_EQ(code.exit(self, a), InlineCode::MonitorRelease);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_deflate_idle(), 2u);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
}

TEST_F(HeavyModeTest, InlineMonitorPathsOnHeavyMonitor) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(code.enter(self, a), InlineCode::MonitorAcquire);
  expectOwned(a, self, 1);
  EXPECT_EQ(code.enter(self, a), InlineCode::MonitorRecursion);
  expectOwned(a, self, 2);
  EXPECT_EQ(code.exit(self, a), InlineCode::Runtime);
  expectOwned(a, self, 1);
  EXPECT_EQ(code.exit(self, a), InlineCode::MonitorRelease);
  expectIdleMonitor(a);
  // A full lock stack from inline code, then a runtime enter of a new
  // object: it gets a monitor (H1), after the runtime made room (E2) as for
  // any enter with a full stack, so that inline enters, which test for room
  // first, find some.
  std::vector<Obj *> objs;
  for (size_t i = 0; i < kCapacity; ++i) {
    objs.push_back(newObj());
    ASSERT_EQ(code.enter(self, objs.back()), InlineCode::FastLock);
  }
  Obj *extra = newObj();
  ASSERT_EQ(code.enter(self, extra), InlineCode::Runtime);
  expectOwned(extra, self, 1);
  expectOwned(objs[0], self, 1);
  EXPECT_EQ(lockStack(self), std::vector<void *>(objs.begin() + 1, objs.end()));
  EXPECT_EQ(code.exit(self, extra), InlineCode::MonitorRelease);
  for (auto it = objs.rbegin(); it != objs.rend(); ++it)
    code.exit(self, *it);
  for (Obj *o : objs)
    EXPECT_FALSE(jitlock_rt_holds_lock(self, o));
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_deflate_idle(), 3u);
  EXPECT_EQ(stats().monitors_alive, 0u);
  for (Obj *o : objs)
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
}

TEST_F(HeavyModeTest, RuntimeContendsForInlineFastLock) {
  // A worker fast-locks inline; the heavy runtime enter must inflate with
  // an anonymous owner and wait for the worker's exit to hand it over.
  Obj *a = newObj();
  Worker w;
  w.call([&] { ASSERT_EQ(code.enter(w.thread(), a), InlineCode::FastLock); });
  std::atomic<bool> in{false};
  Worker contender;
  contender.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(contender.thread(), a), JITLOCK_OK);
    in = true;
    EXPECT_EQ(jitlock_rt_monitor_exit(contender.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.anonymous_owner, 1u);
  EXPECT_EQ(i.owner, w.thread());
  EXPECT_FALSE(in.load());
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u) << "anonymous and queued";
  w.call([&] { EXPECT_EQ(code.exit(w.thread(), a), InlineCode::Runtime); });
  ASSERT_TRUE(contender.join());
  EXPECT_TRUE(in.load());
  expectIdleMonitor(a);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

// Eight threads lock shared objects (in index order) and fresh private ones,
// each enter and exit randomly through inline code or the runtime, with a
// plain counter per object incremented under its lock. Between rounds every
// worker waits at a gate (holding nothing, running no lock code) while the
// main thread deflates: afterwards no monitor may be left and every header
// must be exactly its unlocked form again.
TEST_F(HeavyModeTest, MixedPathsWithDeflationRounds) {
  constexpr int kThreads = 8, kShared = 4, kRounds = 20, kOpsPerRound = 1000;
  const uint64_t seed = std::random_device{}();
  std::printf("HeavyModeTest.MixedPathsWithDeflationRounds seed=%" PRIu64 "\n",
              seed);
  struct Shared {
    Obj o;
    uint64_t counter = 0; // guarded by o's lock; plain on purpose
    std::atomic<int> owner{-1};
  };
  std::deque<Shared> shared(kShared);
  std::vector<uint64_t> increments(kThreads, 0);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0, round = 0;
  std::atomic<bool> failed{false};

  auto body = [&](int id) {
    jitlock_thread *t = jitlock_rt_attach();
    std::mt19937_64 rng(seed * 131 + id);
    std::deque<Obj> privates;
    std::vector<void *> held; // acquisition order
    auto sharedIndex = [&](void *o) {
      for (int s = 0; s < kShared; ++s)
        if (&shared[s].o == o)
          return s;
      return -1;
    };
    auto lockIt = [&](void *o) {
      if (rng() % 2)
        code.enter(t, o);
      else
        EXPECT_EQ(jitlock_rt_monitor_enter(t, o), JITLOCK_OK);
      if (int s = sharedIndex(o); s >= 0) {
        bool first = std::find(held.begin(), held.end(), o) == held.end();
        if (shared[s].owner.exchange(id, std::memory_order_relaxed) !=
            (first ? -1 : id))
          failed = true;
        ++shared[s].counter;
        ++increments[id];
      }
      held.push_back(o);
    };
    auto unlockAt = [&](size_t k) {
      void *o = held[k];
      held.erase(held.begin() + k);
      if (int s = sharedIndex(o); s >= 0) {
        ++shared[s].counter;
        ++increments[id];
        if (std::find(held.begin(), held.end(), o) == held.end() &&
            shared[s].owner.exchange(-1, std::memory_order_relaxed) != id)
          failed = true;
      }
      if (rng() % 2)
        code.exit(t, o);
      else
        EXPECT_EQ(jitlock_rt_monitor_exit(t, o), JITLOCK_OK);
    };
    for (int r = 0; r < kRounds; ++r) {
      for (int op = 0; op < kOpsPerRound && !failed; ++op) {
        // An increasing run of shared objects (the lock order), some
        // re-entered, plus a fresh private object.
        int first = int(rng() % kShared);
        int last = first + int(rng() % (kShared - first));
        for (int s = first; s <= last; ++s) {
          lockIt(&shared[s].o);
          if (rng() % 4 == 0)
            lockIt(&shared[s].o);
          if (s == first)
            lockIt(&privates.emplace_back());
        }
        if (rng() % 4 == 0)
          lockIt(held[0]); // usually non-adjacent
        if (rng() % 8 == 0)
          jitlock_rt_identity_hash(t, held[rng() % held.size()]);
        if (held.size() > 2 && rng() % 4 == 0)
          unlockAt(rng() % (held.size() - 1)); // unstructured
        while (!held.empty())
          unlockAt(held.size() - 1);
        EXPECT_TRUE(lockStack(t).empty());
      }
      // The gate: native, holding nothing, until main has deflated.
      {
        NativeScope gate(t);
        std::unique_lock<std::mutex> g(mu);
        ++arrived;
        cv.notify_all();
        cv.wait(g, [&] { return round > r; });
      }
      for (Obj &p : privates)
        EXPECT_EQ(p.hdr() & ~kHashMask, kUnlockedHeader);
      privates.clear(); // deflated, so their memory may go
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  };

  jitlock_rt_stats s0 = stats();
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back(body, i);
  uint64_t deflated = 0;
  for (int r = 0; r < kRounds; ++r) {
    std::unique_lock<std::mutex> g(mu);
    cv.wait(g, [&] { return arrived == kThreads * (r + 1); });
    deflated += jitlock_rt_deflate_idle();
    EXPECT_EQ(stats().monitors_alive, 0u) << "round " << r;
    for (auto &sh : shared) {
      EXPECT_EQ(sh.o.hdr() & ~kHashMask, kUnlockedHeader) << "round " << r;
      EXPECT_EQ(sh.owner.load(), -1);
    }
    ++round;
    cv.notify_all();
  }
  for (auto &th : threads)
    th.join();
  EXPECT_FALSE(failed.load()) << "mutual exclusion violated, seed " << seed;
  uint64_t sum = 0, expected = 0;
  for (auto &sh : shared)
    sum += sh.counter;
  for (uint64_t n : increments)
    expected += n;
  EXPECT_EQ(sum, expected) << "lost updates, seed " << seed;
  jitlock_rt_stats s = stats();
  EXPECT_EQ(deflated, s.inflations - s0.inflations) << "seed " << seed;
  EXPECT_EQ(s.monitors_alive, 0u);
  std::printf("  inflations=%" PRIu64 " deflated=%" PRIu64 " contended=%" PRIu64
              " fast_locks=%" PRIu64 "\n",
              s.inflations - s0.inflations, deflated,
              s.contended_enters - s0.contended_enters,
              s.fast_locks - s0.fast_locks);
}

} // namespace
