//===- RestoreTest.cpp - Deopt-time lock restoration ---------------------===//
//
// jitlock_rt_restore_locks re-acquires a deoptimized frame's elided locks so
// that the lock stack ends up exactly as if nothing had been elided: same
// order, recursion by adjacency, existing entries never reordered; inflation
// only where order cannot be expressed. After every successful restore the
// test exits all locks innermost first and checks everything is unlocked.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

using namespace jitlock_test;

namespace {

class RestoreTest : public RuntimeTest {
protected:
  int restore(std::initializer_list<jitlock_relock_entry> list,
              uint32_t flags = 0, jitlock_thread *owner = nullptr) {
    std::vector<jitlock_relock_entry> v(list);
    return jitlock_rt_restore_locks(owner ? owner : self, v.data(), v.size(),
                                    flags);
  }
  // Exits `objs` in the given order (innermost first), expecting success.
  void exitAll(std::initializer_list<Obj *> objs) {
    for (Obj *o : objs)
      ASSERT_EQ(exit(o), JITLOCK_OK) << describe(o);
    EXPECT_TRUE(lockStack(self).empty());
  }
  void expectAllUnlockedAfterShutdown(std::initializer_list<Obj *> objs) {
    for (Obj *o : objs)
      EXPECT_FALSE(jitlock_rt_holds_lock(self, o));
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    for (Obj *o : objs)
      EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader)) << (void *)o;
    self = jitlock_rt_attach();
  }
};

jitlock_relock_entry H(Obj *o) { return {o, JITLOCK_RELOCK_HELD}; }
jitlock_relock_entry E(Obj *o) { return {o, JITLOCK_RELOCK_ELIDED}; }

using Stack = std::vector<void *>;

TEST_F(RestoreTest, EmptyListChangesNothing) {
  Obj *x = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_restore_locks(self, nullptr, 0, 0), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), Stack{x});
  exitAll({x});
}

TEST_F(RestoreTest, IntoEmptyStack) {
  Obj *a = newObj(), *b = newObj();
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(restore({E(a), E(a), E(b)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{a, a, b}));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader & ~kLockMask));
  EXPECT_EQ(stats().inflations, s0.inflations);
  exitAll({b, a, a});
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

TEST_F(RestoreTest, HeldThenElidedAppends) {
  // Frame [A held, A elided, B elided] with stack [X, A] -> [X, A, A, B].
  Obj *x = newObj(), *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(restore({H(a), E(a), E(b)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, a, a, b}));
  EXPECT_EQ(stats().inflations, s0.inflations);
  for (Obj *o : {x, a, b})
    EXPECT_EQ(inspect(o).state, JITLOCK_STATE_FAST) << describe(o);
  exitAll({b, a, a, x});
  expectAllUnlockedAfterShutdown({x, a, b});
}

TEST_F(RestoreTest, ElidedBeforeHeldIsInsertedBelow) {
  // Frame [A elided, B held] with stack [X, B] -> [X, A, B].
  Obj *x = newObj(), *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), H(b)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, a, b}));
  for (Obj *o : {x, a, b})
    EXPECT_EQ(inspect(o).state, JITLOCK_STATE_FAST) << describe(o);
  exitAll({b, a, x});
  expectAllUnlockedAfterShutdown({x, a, b});
}

TEST_F(RestoreTest, ElidedBetweenHeldEntries) {
  // Frame [A held, B elided, C held, C elided] with stack [X, A, C]
  //   -> [X, A, B, C, C].
  Obj *x = newObj(), *a = newObj(), *b = newObj(), *c = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(restore({H(a), E(b), H(c), E(c)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, a, b, c, c}));
  exitAll({c, c, b, a, x});
  expectAllUnlockedAfterShutdown({x, a, b, c});
}

TEST_F(RestoreTest, ElidedRecursionBelowHeldIsAdjacent) {
  // Frame [A elided, A held] with stack [X, A] -> [X, A, A].
  Obj *x = newObj(), *a = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), H(a)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, a, a}));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(a).holds, 2u);
  exitAll({a, a, x});
  expectAllUnlockedAfterShutdown({x, a});
}

TEST_F(RestoreTest, PartlyFilledStack) {
  Obj *x = newObj(), *y = newObj(), *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(y), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), E(b)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, y, a, b}));
  exitAll({b, a, y, x});
  expectAllUnlockedAfterShutdown({x, y, a, b});
}

TEST_F(RestoreTest, NonAdjacentElidedInflates) {
  // An outer frame holds [A, X]; this frame elided a re-entry of A.
  Obj *a = newObj(), *x = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(restore({E(a)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), Stack{x});
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(inspect(x).state, JITLOCK_STATE_FAST);
  exitAll({a, x, a});
  expectAllUnlockedAfterShutdown({a, x});
}

TEST_F(RestoreTest, FullStackInflatesOldest) {
  std::vector<Obj *> o;
  for (size_t k = 0; k < kCapacity; ++k)
    o.push_back(newObj());
  Obj *a = newObj();
  for (Obj *x : o)
    ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(restore({E(a)}), JITLOCK_OK);
  Stack expect(o.begin() + 1, o.end());
  expect.push_back(a);
  EXPECT_EQ(lockStack(self), expect);
  EXPECT_EQ(inspect(o[0]).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(o[0]).owner, self);
  EXPECT_EQ(inspect(o[0]).holds, 1u);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  for (size_t k = kCapacity; k-- > 0;)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_FALSE(jitlock_rt_holds_lock(self, o[0]));
}

TEST_F(RestoreTest, StackBecomesFullDuringRestore) {
  // Seven entries; the frame elided A and B: A fills the stack, B inflates
  // the oldest entry.
  std::vector<Obj *> o;
  for (int k = 0; k < 7; ++k)
    o.push_back(newObj());
  Obj *a = newObj(), *b = newObj();
  for (Obj *x : o)
    ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), E(b)}), JITLOCK_OK);
  Stack expect(o.begin() + 1, o.end());
  expect.push_back(a);
  expect.push_back(b);
  EXPECT_EQ(lockStack(self), expect);
  EXPECT_EQ(inspect(o[0]).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(o[0]).holds, 1u);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  for (int k = 6; k >= 0; --k)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(RestoreTest, FullStackInsertBelowHeldInflatesOldest) {
  // Full stack [O0..O6, B]; frame [A elided, B held] -> [O1..O6, A, B].
  std::vector<Obj *> o;
  for (int k = 0; k < 7; ++k)
    o.push_back(newObj());
  Obj *a = newObj(), *b = newObj();
  for (Obj *x : o)
    ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), H(b)}), JITLOCK_OK);
  Stack expect(o.begin() + 1, o.end());
  expect.push_back(a);
  expect.push_back(b);
  EXPECT_EQ(lockStack(self), expect);
  EXPECT_EQ(inspect(o[0]).state, JITLOCK_STATE_INFLATED);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  for (int k = 6; k >= 0; --k)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(RestoreTest, HeldInMonitorThenElided) {
  // A is held through its monitor (no lock-stack entry); the frame elided a
  // re-entry of A and a lock of B.
  Obj *a = newObj(), *b = newObj(), *x = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK); // A: monitor, holds 1; stack [X]
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  ASSERT_EQ(restore({H(a), E(a), E(b)}), JITLOCK_OK);
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(lockStack(self), (Stack{x, b}));
  exitAll({b, a, a, x});
  expectAllUnlockedAfterShutdown({a, b, x});
}

TEST_F(RestoreTest, FramesOutermostFirst) {
  // Two frames restored outermost first: [A e] then [A e, B e] -> [A, A, B].
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(restore({E(a)}), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), E(b)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{a, a, b}));
  // A third frame [B e, A e]: A is not adjacent any more and inflates.
  ASSERT_EQ(restore({E(b), E(a)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{b, b}));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(a).holds, 3u);
  exitAll({a, b, b, a, a});
  expectAllUnlockedAfterShutdown({a, b});
}

TEST_F(RestoreTest, NotYoungestInflatesElided) {
  // A younger frame holds Y on the lock stack; H is held by this frame in a
  // monitor. The frame elided two locks of A and one of Y.
  Obj *h = newObj(), *y = newObj(), *a = newObj(), *z = newObj();
  ASSERT_EQ(enter(h), JITLOCK_OK);
  ASSERT_EQ(enter(z), JITLOCK_OK);
  ASSERT_EQ(enter(h), JITLOCK_OK);
  ASSERT_EQ(exit(h), JITLOCK_OK);
  ASSERT_EQ(exit(z), JITLOCK_OK);  // H: monitor, holds 1; stack []
  ASSERT_EQ(enter(y), JITLOCK_OK); // stack [Y]
  jitlock_lock_info hi = inspect(h);
  ASSERT_EQ(hi.state, JITLOCK_STATE_INFLATED);

  ASSERT_EQ(restore({H(h), E(a), E(a)}, JITLOCK_RELOCK_NOT_YOUNGEST),
            JITLOCK_OK);
  EXPECT_EQ(lockStack(self), Stack{y}) << "held entries are untouched";
  jitlock_lock_info ai = inspect(a);
  EXPECT_EQ(ai.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(ai.owner, self);
  EXPECT_EQ(ai.holds, 2u);
  EXPECT_EQ(inspect(h).holds, 1u);
  EXPECT_EQ(inspect(h).owner, self);

  // An elided lock of an object a younger frame holds on the stack.
  ASSERT_EQ(restore({E(y)}, JITLOCK_RELOCK_NOT_YOUNGEST), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(inspect(y).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(y).holds, 2u);

  exitAll({y, y, a, a, h});
  expectAllUnlockedAfterShutdown({h, y, a, z});
}

TEST_F(RestoreTest, OnBehalfOfStoppedThread) {
  Obj *x = newObj(), *a = newObj(), *b = newObj();
  Worker w;
  w.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), x), JITLOCK_OK); });
  ASSERT_EQ(restore({H(x), E(a), E(b)}, 0, w.thread()), JITLOCK_OK);
  EXPECT_EQ(lockStack(w.thread()), (Stack{x, a, b}));
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(jitlock_rt_owner_of(a), w.thread());
  EXPECT_EQ(jitlock_rt_owner_of(b), w.thread());
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  w.call([&] {
    jitlock_thread *t = w.thread();
    EXPECT_TRUE(jitlock_rt_holds_lock(t, a));
    EXPECT_EQ(jitlock_rt_monitor_exit(t, b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, x), JITLOCK_OK);
    EXPECT_TRUE(lockStack(t).empty());
  });
  for (Obj *o : {x, a, b})
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
}

TEST_F(RestoreTest, OnBehalfBusyChangesNothing) {
  // Owner T2 holds X; a third thread T3 holds E fast and M inflated.
  Obj *x = newObj(), *y = newObj(), *a = newObj(), *e = newObj(), *m = newObj(),
      *pad = newObj();
  Worker t2, t3;
  t2.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), x), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), y), JITLOCK_OK);
  });
  t3.call([&] {
    jitlock_thread *t = t3.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, m), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, pad), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, m), JITLOCK_OK); // M inflated
    ASSERT_EQ(jitlock_rt_monitor_exit(t, m), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(t, pad), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t, e), JITLOCK_OK); // E fast
  });
  ASSERT_EQ(inspect(e).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(inspect(m).state, JITLOCK_STATE_INFLATED);
  ASSERT_EQ(inspect(m).owner, t3.thread());

  for (Obj *busy : {e, m}) {
    SCOPED_TRACE(stateName(inspect(busy).state));
    uint64_t busyHdr = busy->hdr();
    jitlock_lock_info before = inspect(busy);
    EXPECT_EQ(restore({H(y), E(a), E(busy)}, 0, t2.thread()), JITLOCK_EBUSY);
    EXPECT_EQ(lockStack(t2.thread()), (Stack{x, y}));
    EXPECT_EQ(lockStack(t3.thread()), Stack{e});
    EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
    EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader))
        << "A was not released again";
    EXPECT_EQ(busy->hdr(), withTableHash(busy, busyHdr));
    jitlock_lock_info after = inspect(busy);
    EXPECT_EQ(after.owner, before.owner);
    EXPECT_EQ(after.holds, before.holds);
    EXPECT_EQ(after.state, before.state);
    EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader & ~kLockMask));
    EXPECT_EQ(y->hdr(), withTableHash(y, kUnlockedHeader & ~kLockMask));
  }
  // Busy because the caller itself owns it.
  Obj *mine = newObj();
  ASSERT_EQ(enter(mine), JITLOCK_OK);
  EXPECT_EQ(restore({E(a), E(mine)}, 0, t2.thread()), JITLOCK_EBUSY);
  EXPECT_EQ(lockStack(t2.thread()), (Stack{x, y}));
  EXPECT_EQ(lockStack(self), Stack{mine});
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  ASSERT_EQ(exit(mine), JITLOCK_OK);

  t3.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(t3.thread(), e), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t3.thread(), m), JITLOCK_OK);
  });
  t2.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), y), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), x), JITLOCK_OK);
  });
}

TEST_F(RestoreTest, OnBehalfBusyAfterWouldBeInflationChangesNothing) {
  // T2 holds [X, Y]; its frame elided a re-entry of X (non-adjacent: would
  // inflate X) and a lock of E, which T3 owns. EBUSY must leave X on T2's
  // lock stack exactly as before.
  Obj *x = newObj(), *y = newObj(), *e = newObj();
  Worker t2, t3;
  t2.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), x), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), y), JITLOCK_OK);
  });
  t3.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(t3.thread(), e), JITLOCK_OK); });
  EXPECT_EQ(restore({E(x), E(e)}, 0, t2.thread()), JITLOCK_EBUSY);
  EXPECT_EQ(lockStack(t2.thread()), (Stack{x, y}));
  EXPECT_EQ(inspect(x).state, JITLOCK_STATE_FAST) << describe(x);
  EXPECT_EQ(inspect(x).holds, 1u);
  EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader & ~kLockMask));
  EXPECT_EQ(inspect(e).owner, t3.thread());
  t3.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(t3.thread(), e), JITLOCK_OK); });
  t2.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), y), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t2.thread(), x), JITLOCK_OK);
  });
}

TEST_F(RestoreTest, SelfRestoreWaitsForOwner) {
  // When the owner is the caller, an elided object owned by another thread
  // is waited for, not reported busy.
  Obj *a = newObj(), *e = newObj();
  Worker t2, t3;
  t3.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(t3.thread(), e), JITLOCK_OK); });
  std::atomic<int> rc{-1};
  t2.post([&] {
    jitlock_relock_entry list[] = {E(a), E(e)};
    rc = jitlock_rt_restore_locks(t2.thread(), list, 2, 0);
  });
  ASSERT_TRUE(waitEntryQueued(e)) << describe(e);
  EXPECT_FALSE(t2.finished());
  t3.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(t3.thread(), e), JITLOCK_OK); });
  ASSERT_TRUE(t2.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), t2.thread());
  EXPECT_EQ(jitlock_rt_owner_of(e), t2.thread());
  t2.call([&] {
    jitlock_thread *t = t2.thread();
    EXPECT_TRUE(jitlock_rt_holds_lock(t, a));
    EXPECT_TRUE(jitlock_rt_holds_lock(t, e));
    EXPECT_EQ(jitlock_rt_monitor_exit(t, e), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_TRUE(lockStack(t).empty());
  });
  EXPECT_EQ(jitlock_rt_owner_of(e), nullptr);
}

TEST_F(RestoreTest, HeldInMonitorAndOnStackMixed) {
  // B is held in a monitor, A on the stack; frame [B held, A held, C elided]
  // with stack [X, A] -> [X, A, C].
  Obj *x = newObj(), *a = newObj(), *b = newObj(), *c = newObj(), *z = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(z), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(z), JITLOCK_OK); // B: monitor, holds 1; stack [X]
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(restore({H(b), H(a), E(c)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{x, a, c}));
  EXPECT_EQ(inspect(b).holds, 1u);
  exitAll({c, a, b, x});
  expectAllUnlockedAfterShutdown({x, a, b, c, z});
}

TEST_F(RestoreTest, NotYoungestLeavesFastHeldEntriesInPlace) {
  // Stack [A, Y]: A belongs to this frame, Y to a younger one.
  Obj *a = newObj(), *y = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(y), JITLOCK_OK);
  ASSERT_EQ(restore({H(a), E(b)}, JITLOCK_RELOCK_NOT_YOUNGEST), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (Stack{a, y}));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_INFLATED) << describe(b);
  EXPECT_EQ(inspect(b).owner, self);
  EXPECT_EQ(inspect(b).holds, 1u);
  exitAll({y, b, a});
  expectAllUnlockedAfterShutdown({a, y, b});
}

TEST_F(RestoreTest, ElidedObjectWithFreeMonitor) {
  // A has a monitor nobody owns (monitors are kept until shutdown or
  // deflation); the elided lock enters it.
  Obj *a = newObj(), *x = newObj(), *z = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(z), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(z), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(restore({E(a), E(a)}), JITLOCK_OK);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(a).owner, self);
  std::vector<void *> ls = lockStack(self);
  ASSERT_FALSE(ls.empty());
  EXPECT_EQ(ls[0], x) << "existing entries never move";
  exitAll({a, a, x});
  expectAllUnlockedAfterShutdown({a, x, z});
}

TEST_F(RestoreTest, OnBehalfNonAdjacentInflatesOwnersEntry) {
  // T2 holds [X, Y]; its frame elided a re-entry of X: X is inflated with
  // T2 as owner and leaves T2's lock stack.
  Obj *x = newObj(), *y = newObj();
  Worker t2;
  t2.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), x), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), y), JITLOCK_OK);
  });
  ASSERT_EQ(restore({E(x)}, 0, t2.thread()), JITLOCK_OK);
  EXPECT_EQ(lockStack(t2.thread()), Stack{y});
  jitlock_lock_info i = inspect(x);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(x);
  EXPECT_EQ(i.owner, t2.thread());
  EXPECT_EQ(i.holds, 2u);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, x));
  t2.call([&] {
    jitlock_thread *t = t2.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, x), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, y), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, x), JITLOCK_OK);
    EXPECT_TRUE(lockStack(t).empty());
  });
  EXPECT_EQ(jitlock_rt_owner_of(x), nullptr);
}

TEST_F(RestoreTest, OnBehalfFullStackInflatesOwnersOldest) {
  std::vector<Obj *> o;
  for (size_t k = 0; k < kCapacity; ++k)
    o.push_back(newObj());
  Obj *a = newObj();
  Worker t2;
  t2.call([&] {
    for (Obj *x : o)
      ASSERT_EQ(jitlock_rt_monitor_enter(t2.thread(), x), JITLOCK_OK);
  });
  ASSERT_EQ(restore({E(a)}, 0, t2.thread()), JITLOCK_OK);
  Stack expect(o.begin() + 1, o.end());
  expect.push_back(a);
  EXPECT_EQ(lockStack(t2.thread()), expect);
  EXPECT_EQ(inspect(o[0]).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(o[0]).owner, t2.thread());
  t2.call([&] {
    jitlock_thread *t = t2.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    for (size_t k = kCapacity; k-- > 0;)
      EXPECT_EQ(jitlock_rt_monitor_exit(t, o[k]), JITLOCK_OK) << k;
    EXPECT_TRUE(lockStack(t).empty());
  });
}

TEST_F(RestoreTest, HeldEntryCaughtMidInflation) {
  // Deopt at an enter: A is fast-locked by main but a contender has already
  // inflated it with an anonymous owner. The frame [A held, A elided] must
  // still be restored, and the contender served after both exits.
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w;
  std::atomic<int> rc{-1};
  ASSERT_TRUE(contendAndQueue(w, a, &rc)) << describe(a);
  ASSERT_EQ(inspect(a).anonymous_owner, 1u);
  ASSERT_EQ(restore({H(a), E(a)}), JITLOCK_OK);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, self) << describe(a);
  EXPECT_EQ(i.holds, 2u) << describe(a);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_FALSE(w.finished());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join()) << describe(a);
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(RestoreTest, ElidedObjectCaughtMidInflationOnOwnersStack) {
  // As above, but the frame's only entry is elided and the object sits
  // below another entry: [A X], A anonymously inflated, frame [A elided].
  Obj *a = newObj(), *x = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  Worker w;
  ASSERT_TRUE(contendAndQueue(w, a)) << describe(a);
  ASSERT_EQ(restore({E(a)}), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), Stack{x});
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, self) << describe(a);
  EXPECT_EQ(i.anonymous_owner, 0u) << describe(a);
  EXPECT_EQ(i.holds, 2u) << describe(a);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(x), JITLOCK_OK);
  EXPECT_FALSE(w.finished());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join()) << describe(a);
}

TEST_F(RestoreTest, MismatchedHeldEntriesAreRejected) {
  Obj *x = newObj(), *a = newObj(), *b = newObj(), *o = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  auto unchanged = [&] {
    EXPECT_EQ(lockStack(self), Stack{x});
    EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
    EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
    EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader & ~kLockMask));
  };
  // A is not held at all.
  EXPECT_EQ(restore({H(a)}), JITLOCK_EINVAL);
  unchanged();
  EXPECT_EQ(restore({H(a), E(b)}), JITLOCK_EINVAL);
  unchanged();
  EXPECT_EQ(restore({E(b), H(a)}), JITLOCK_EINVAL);
  unchanged();
  EXPECT_EQ(restore({E(b), E(b), H(a), E(b)}), JITLOCK_EINVAL);
  unchanged();
  // An unknown kind.
  jitlock_relock_entry bad[] = {{b, 7}};
  EXPECT_EQ(jitlock_rt_restore_locks(self, bad, 1, 0), JITLOCK_EINVAL);
  unchanged();
  // Held by another thread, not by the owner.
  Worker w;
  w.call(
      [&] { ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), o), JITLOCK_OK); });
  EXPECT_EQ(restore({H(o), E(b)}), JITLOCK_EINVAL);
  unchanged();
  EXPECT_EQ(lockStack(w.thread()), Stack{o});
  EXPECT_EQ(restore({H(x), E(b)}, 0, w.thread()), JITLOCK_EINVAL)
      << "X is held by main, not by the worker";
  EXPECT_EQ(lockStack(w.thread()), Stack{o});
  unchanged();
  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), o), JITLOCK_OK); });
  exitAll({x});
}

TEST_F(RestoreTest, NullObjectIsRejected) {
  Obj *x = newObj(), *a = newObj();
  ASSERT_EQ(enter(x), JITLOCK_OK);
  jitlock_relock_entry list[] = {E(a), {nullptr, JITLOCK_RELOCK_ELIDED}};
  int rc = jitlock_rt_restore_locks(self, list, 2, 0);
  EXPECT_TRUE(rc == JITLOCK_ENULL || rc == JITLOCK_EINVAL) << st(rc);
  EXPECT_EQ(lockStack(self), Stack{x});
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  exitAll({x});
}

TEST_F(RestoreTest, RestoreKeepsEmbedderAndHashBits) {
  Obj *a = newObj(), *b = newObj(), *x = newObj();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(restore({E(b), E(a)}), JITLOCK_OK); // A inflates
  EXPECT_EQ(lockStack(self), (Stack{x, b}));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader & ~kLockMask));
  exitAll({a, b, x, a});
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | (h << kHashShift)));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
  EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader));
  self = jitlock_rt_attach();
}

} // namespace
