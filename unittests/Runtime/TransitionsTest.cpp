//===- TransitionsTest.cpp - Lock-state transitions ----------------------===//
//
// One test per transition of the lightweight-locking protocol:
// unlocked -> fast -> recursive (adjacent) -> inflated (non-adjacent, full
// stack) -> anonymous owner fixed by the real owner (contention) -> exit.
// Every object carries embedder bits in [2,8) and [39,64) that must survive.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <set>

using namespace jitlock_test;

namespace {

class TransitionsTest : public RuntimeTest {};

uint64_t fastHeader(uint64_t unlockedHeader) {
  return (unlockedHeader & ~kLockMask) | kFastLocked;
}

TEST_F(TransitionsTest, UnlockedToFastAndBack) {
  Obj *a = newObj();
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_UNLOCKED);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.holds, 0u);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));

  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s1 = stats();

  // The fast lock only flips the low bits; the upper bits are untouched.
  EXPECT_EQ(a->hdr(), fastHeader(kUnlockedHeader));
  i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_FAST) << describe(a);
  EXPECT_EQ(i.anonymous_owner, 0u);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 1u);
  EXPECT_EQ(i.entry_queued, 0u);
  EXPECT_EQ(i.waiting, 0u);
  EXPECT_EQ(lockStack(self), std::vector<void *>{a});
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(jitlock_rt_owner_of(a), self);
  EXPECT_EQ(s1.fast_locks - s0.fast_locks, 1u);
  EXPECT_EQ(s1.inflations - s0.inflations, 0u);
  EXPECT_EQ(s1.monitors_alive, s0.monitors_alive);
  EXPECT_GE(s1.slow_path_calls - s0.slow_path_calls, 1u);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_UNLOCKED);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  EXPECT_EQ(stats().inflations, s0.inflations);
}

TEST_F(TransitionsTest, AdjacentReentryPushesDuplicate) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s1 = stats();

  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, a}));
  EXPECT_EQ(a->hdr(), fastHeader(kUnlockedHeader)) << "no inflation expected";
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_FAST) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(s1.recursive_locks - s0.recursive_locks, 1u);
  EXPECT_EQ(s1.fast_locks - s0.fast_locks, 0u);
  EXPECT_EQ(s1.inflations - s0.inflations, 0u);

  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, a, a}));
  EXPECT_EQ(inspect(a).holds, 3u);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), std::vector<void *>{a});
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(a).holds, 1u);
  EXPECT_EQ(a->hdr(), fastHeader(kUnlockedHeader));
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(stats().inflations, s0.inflations);
}

TEST_F(TransitionsTest, NestedDistinctObjectsStayFast) {
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, b, c}));
  for (Obj *o : {a, b, c}) {
    EXPECT_EQ(inspect(o).state, JITLOCK_STATE_FAST);
    EXPECT_EQ(inspect(o).owner, self);
    EXPECT_EQ(o->hdr(), fastHeader(kUnlockedHeader));
  }
  ASSERT_EQ(exit(c), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, NonAdjacentReentryInflates) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(a), JITLOCK_OK); // A B A: A is inflated
  jitlock_rt_stats s1 = stats();

  EXPECT_EQ(a->lowBits(), kMonitor) << std::hex << a->hdr();
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.anonymous_owner, 0u);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b})
      << "A's entry must leave the lock stack";
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(b->hdr(), fastHeader(kUnlockedHeader));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(jitlock_rt_owner_of(a), self);
  EXPECT_EQ(s1.inflations - s0.inflations, 1u);
  EXPECT_EQ(s1.monitors_alive - s0.monitors_alive, 1u);

  // Innermost first: A, B, A.
  ASSERT_EQ(exit(a), JITLOCK_OK);
  i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 1u);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
  EXPECT_TRUE(lockStack(self).empty());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  i = inspect(a);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.holds, 0u);
  EXPECT_TRUE(i.state == JITLOCK_STATE_INFLATED ||
              i.state == JITLOCK_STATE_UNLOCKED)
      << describe(a);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));

  // Shutdown restores the unlocked header with every embedder bit.
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, NonAdjacentReentryMovesWholeRunToMonitor) {
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // [A A B C] + A
  EXPECT_EQ(lockStack(self), (std::vector<void *>{b, c}));
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 3u);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(c).state, JITLOCK_STATE_FAST);

  // Entering an inflated object the thread owns just counts.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).holds, 4u);
  EXPECT_EQ(lockStack(self), (std::vector<void *>{b, c}));

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(c), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(inspect(a).holds, 2u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(lockStack(self).empty());
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, FullStackInflatesOldest) {
  std::vector<Obj *> o;
  for (size_t k = 0; k <= kCapacity; ++k)
    o.push_back(newObj());
  for (size_t k = 0; k < kCapacity; ++k)
    ASSERT_EQ(enter(o[k]), JITLOCK_OK) << k;
  std::vector<void *> full(o.begin(), o.begin() + kCapacity);
  EXPECT_EQ(lockStack(self), full);
  for (size_t k = 0; k < kCapacity; ++k)
    EXPECT_EQ(inspect(o[k]).state, JITLOCK_STATE_FAST) << k;

  jitlock_rt_stats s0 = stats();
  ASSERT_EQ(enter(o[kCapacity]), JITLOCK_OK); // the 9th enter
  jitlock_rt_stats s1 = stats();
  EXPECT_EQ(s1.inflations - s0.inflations, 1u);

  std::vector<void *> expect(o.begin() + 1, o.end());
  EXPECT_EQ(lockStack(self), expect) << "oldest leaves, the rest shift down";
  jitlock_lock_info i = inspect(o[0]);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(o[0]);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 1u);
  EXPECT_EQ(o[0]->lowBits(), kMonitor);
  for (size_t k = 1; k <= kCapacity; ++k) {
    EXPECT_EQ(inspect(o[k]).state, JITLOCK_STATE_FAST) << k;
    EXPECT_EQ(o[k]->hdr(), fastHeader(kUnlockedHeader)) << k;
  }

  for (size_t k = kCapacity; k >= 1; --k) {
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
    EXPECT_EQ(o[k]->hdr(), kUnlockedHeader) << k;
  }
  ASSERT_EQ(exit(o[0]), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_FALSE(jitlock_rt_holds_lock(self, o[0]));
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(o[0]->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, FullStackOldestRunLeavesWhole) {
  // [A A A B C D E F] + G: A's run of three leaves the stack together.
  Obj *a = newObj();
  std::vector<Obj *> rest;
  for (int k = 0; k < 6; ++k)
    rest.push_back(newObj());
  for (int k = 0; k < 3; ++k)
    ASSERT_EQ(enter(a), JITLOCK_OK);
  for (int k = 0; k < 5; ++k)
    ASSERT_EQ(enter(rest[k]), JITLOCK_OK);
  ASSERT_EQ(lockStack(self).size(), kCapacity);
  ASSERT_EQ(enter(rest[5]), JITLOCK_OK);

  std::vector<void *> expect(rest.begin(), rest.end());
  EXPECT_EQ(lockStack(self), expect);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 3u);

  for (int k = 5; k >= 0; --k)
    ASSERT_EQ(exit(rest[k]), JITLOCK_OK) << k;
  for (int k = 0; k < 3; ++k)
    ASSERT_EQ(exit(a), JITLOCK_OK) << k;
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(TransitionsTest, FullStackAdjacentReentryOfTop) {
  std::vector<Obj *> o;
  for (size_t k = 0; k < kCapacity; ++k)
    o.push_back(newObj());
  for (Obj *x : o)
    ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(o.back()), JITLOCK_OK); // full, and adjacent to the top
  std::vector<void *> expect(o.begin() + 1, o.end());
  expect.push_back(o.back());
  EXPECT_EQ(lockStack(self), expect);
  EXPECT_EQ(inspect(o[0]).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(o[0]).holds, 1u);
  EXPECT_EQ(inspect(o.back()).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(o.back()).holds, 2u);

  ASSERT_EQ(exit(o.back()), JITLOCK_OK);
  for (size_t k = kCapacity; k-- > 0;)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
  EXPECT_TRUE(lockStack(self).empty());
}

TEST_F(TransitionsTest, DeepNestingKeepsInflatingOldest) {
  // 20 distinct nested objects: the stack always holds the 8 youngest.
  std::vector<Obj *> o;
  for (int k = 0; k < 20; ++k)
    o.push_back(newObj());
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(enter(o[k]), JITLOCK_OK) << k;
    size_t depth = std::min<size_t>(k + 1, kCapacity);
    std::vector<void *> expect(o.begin() + (k + 1 - depth), o.begin() + k + 1);
    ASSERT_EQ(lockStack(self), expect) << "after enter #" << k;
  }
  for (int k = 0; k < 20 - (int)kCapacity; ++k) {
    EXPECT_EQ(inspect(o[k]).state, JITLOCK_STATE_INFLATED) << k;
    EXPECT_EQ(inspect(o[k]).owner, self) << k;
  }
  for (int k = 19; k >= 0; --k)
    ASSERT_EQ(exit(o[k]), JITLOCK_OK) << k;
  EXPECT_TRUE(lockStack(self).empty());
  for (Obj *x : o)
    EXPECT_FALSE(jitlock_rt_holds_lock(self, x));
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  for (Obj *x : o)
    EXPECT_EQ(x->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, DeepRecursionOfOneObject) {
  // Eight adjacent entries fill the stack; the ninth enter inflates the
  // oldest entry, which is the object itself, so its whole run moves into
  // the monitor and later enters count there.
  Obj *a = newObj();
  for (int k = 0; k < 20; ++k) {
    ASSERT_EQ(enter(a), JITLOCK_OK) << k;
    ASSERT_EQ(inspect(a).holds, uint64_t(k + 1)) << k << " " << describe(a);
    ASSERT_EQ(inspect(a).owner, self);
  }
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_TRUE(lockStack(self).empty()) << lockStack(self).size();
  for (int k = 20; k > 0; --k) {
    ASSERT_TRUE(jitlock_rt_holds_lock(self, a)) << k;
    ASSERT_EQ(exit(a), JITLOCK_OK) << k;
  }
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
}

TEST_F(TransitionsTest, FullStackOfOneRunAfterAnother) {
  // [A B B B B B B B] + B -> A inflated, [B x8]; + B -> B's run inflated.
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  for (int k = 0; k < 7; ++k)
    ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), std::vector<void *>(8, b));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(inspect(b).holds, 8u);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(inspect(b).holds, 9u);
  for (int k = 0; k < 9; ++k)
    ASSERT_EQ(exit(b), JITLOCK_OK) << k;
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_FALSE(jitlock_rt_holds_lock(self, b));
}

TEST_F(TransitionsTest, UnstructuredLocking) {
  // lock A; lock B; unlock A; unlock B
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, b));
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  EXPECT_EQ(jitlock_rt_owner_of(b), self);
  EXPECT_EQ(inspect(a).holds, 0u);
  EXPECT_EQ(inspect(b).holds, 1u);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, b));
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(b->hdr(), kUnlockedHeader);

  // Both are free: relock them in the other order and release normally.
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, UnstructuredLockingWithRecursionAndThreeObjects) {
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  // [A A B C]; unlock B, A, C, A in that order.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, b));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(jitlock_rt_holds_lock(self, c));
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a)) << "A is still held once";
  EXPECT_EQ(inspect(a).holds, 1u);
  ASSERT_EQ(exit(c), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, c));
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));
  EXPECT_TRUE(lockStack(self).empty());
  // Nothing is held any more: a second exit of any of them is misuse.
  EXPECT_EQ(exit(a), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(exit(b), JITLOCK_ENOT_OWNER);
  EXPECT_EQ(exit(c), JITLOCK_ENOT_OWNER);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), kUnlockedHeader);
}

// Reads a field of the monitor (pointer storage) at `offset`, through the
// published layout.
template <typename T> T monitorField(const Obj *o, uint32_t offset) {
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  uint64_t h = o->hdr();
  EXPECT_EQ(h & l.lock_mask, l.monitor_value);
  auto *field = reinterpret_cast<T *>((uintptr_t)(h & ~l.lock_mask) + offset);
  return __atomic_load_n(field, __ATOMIC_ACQUIRE);
}
uint64_t monitorOwnerWord(const Obj *o, const jitlock_rt_layout &l) {
  return monitorField<uint64_t>(o, l.monitor_owner_offset);
}
uint32_t monitorEntryCount(const Obj *o, const jitlock_rt_layout &l) {
  return monitorField<uint32_t>(o, l.monitor_entry_count_offset);
}

TEST_F(TransitionsTest, ContentionInflatesWithAnonymousOwnerThenHandsOver) {
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_FAST);

  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), a); });
  ASSERT_TRUE(waitEntryQueued(a))
      << "worker never queued on the contended object: " << describe(a);

  // The contender inflated with an ANONYMOUS owner; the owner is found by
  // scanning lock stacks.
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.anonymous_owner, 1u) << describe(a);
  EXPECT_EQ(i.owner, self) << describe(a);
  EXPECT_EQ(i.holds, 1u) << describe(a);
  EXPECT_GE(i.entry_queued, 1u);
  EXPECT_EQ(a->lowBits(), kMonitor);
  EXPECT_EQ(monitorOwnerWord(a, l), l.monitor_anonymous_owner);
  EXPECT_GE(monitorEntryCount(a, l), 1u)
      << "a thread is parked: the entry count must say so";
  EXPECT_EQ(jitlock_rt_owner_of(a), self);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_FALSE(w.finished());
  EXPECT_EQ(rc.load(), -1);

  // The owner's exit fixes the owner and hands over.
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join()) << "worker did not acquire after the handover";
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_FALSE(jitlock_rt_holds_lock(self, a));

  i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
  EXPECT_EQ(i.anonymous_owner, 0u);
  EXPECT_EQ(i.owner, w.thread());
  EXPECT_EQ(i.holds, 1u);
  EXPECT_EQ(i.entry_queued, 0u);
  EXPECT_EQ(jitlock_rt_owner_of(a), w.thread());
  EXPECT_EQ(monitorOwnerWord(a, l), (uint64_t)(uintptr_t)w.thread());
  EXPECT_TRUE(w.thread() != nullptr && lockStack(w.thread()).empty());

  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK); });
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  w.stop();
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, AnonymousOwnerFixedKeepsRecursion) {
  Obj *a = newObj(), *b = newObj();
  // [A A B]: A is contended while held twice, below another entry.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);

  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), a); });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.anonymous_owner, 1u) << describe(a);
  EXPECT_EQ(i.owner, self) << describe(a);
  EXPECT_EQ(i.holds, 2u) << describe(a);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));

  ASSERT_EQ(exit(b), JITLOCK_OK);
  // A recursive exit only pops (protocol X2-X3 never reads the header), so
  // the owner may still be anonymous here; either way main holds A once.
  ASSERT_EQ(exit(a), JITLOCK_OK);
  i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(i.owner, self) << describe(a);
  EXPECT_EQ(i.holds, 1u) << describe(a);
  EXPECT_TRUE(jitlock_rt_holds_lock(self, a));
  EXPECT_FALSE(w.finished()) << "worker acquired while main still held A";
  EXPECT_EQ(rc.load(), -1);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), w.thread());
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK); });
}

TEST_F(TransitionsTest, ReentryOfAnonymouslyInflatedObjectFixesOwner) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK); // [A B]
  Worker w;
  std::atomic<int> rc{-1};
  ASSERT_TRUE(contendAndQueue(w, a, &rc)) << describe(a);
  ASSERT_EQ(inspect(a).anonymous_owner, 1u) << describe(a);

  // Re-entering finds the monitor with an anonymous owner: the thread moves
  // its lock-stack entry into the monitor and becomes the named owner.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.anonymous_owner, 0u) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});

  // notify on a monitor the caller owns is fine and wakes no enterer.
  EXPECT_EQ(jitlock_rt_notify(self, a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(w.finished());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
}

TEST_F(TransitionsTest, NotifyOnAnonymouslyInflatedObjectFixesOwner) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w;
  ASSERT_TRUE(contendAndQueue(w, a)) << describe(a);
  ASSERT_EQ(inspect(a).anonymous_owner, 1u);
  EXPECT_EQ(jitlock_rt_notify_all(self, a), JITLOCK_OK);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.anonymous_owner, 0u) << describe(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 1u);
  EXPECT_TRUE(lockStack(self).empty());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
}

TEST_F(TransitionsTest, ContentionCounters) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  {
    Worker w;
    ASSERT_TRUE(contendAndQueue(w, a)) << describe(a);
    // Queued is not yet parked: a joiner counts itself before its barrier
    // and its re-check of the owner (J1-J3), and an exit meanwhile would
    // let it take the monitor without sleeping.
    ASSERT_TRUE(waitUntil([&] { return stats().parks > s0.parks; }))
        << describe(a);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_TRUE(w.join());
    // Read while the worker is still attached and after it detached: the
    // counters of detached threads are kept.
    jitlock_rt_stats s1 = stats();
    EXPECT_EQ(s1.inflations - s0.inflations, 1u);
    EXPECT_GE(s1.contended_enters - s0.contended_enters, 1u);
    EXPECT_GE(s1.parks - s0.parks, 1u);
    EXPECT_GE(s1.monitor_enters - s0.monitor_enters, 1u);
  }
  jitlock_rt_stats s2 = stats();
  EXPECT_EQ(s2.inflations - s0.inflations, 1u);
  EXPECT_GE(s2.contended_enters - s0.contended_enters, 1u);
  EXPECT_GE(s2.parks - s0.parks, 1u);
}

TEST_F(TransitionsTest, ContendedInflatedMonitorHandsOver) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK); // inflated, owner = self, holds 2
  ASSERT_EQ(inspect(a).anonymous_owner, 0u);

  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), a); });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.anonymous_owner, 0u);
  EXPECT_EQ(i.holds, 2u);

  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_FALSE(w.finished());
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(inspect(a).owner, w.thread());
  w.call([&] {
    // Re-entry by the new owner counts in the monitor.
    EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
    EXPECT_EQ(inspect(a).holds, 2u);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
    EXPECT_FALSE(jitlock_rt_holds_lock(w.thread(), a));
  });
}

TEST_F(TransitionsTest, TwoContendersBothGetTheLock) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w1, w2;
  std::atomic<int> rc1{-1}, rc2{-1};
  w1.post([&] {
    rc1 = jitlock_rt_monitor_enter(w1.thread(), a);
    EXPECT_EQ(jitlock_rt_monitor_exit(w1.thread(), a), JITLOCK_OK);
  });
  w2.post([&] {
    rc2 = jitlock_rt_monitor_enter(w2.thread(), a);
    EXPECT_EQ(jitlock_rt_monitor_exit(w2.thread(), a), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(a, 2)) << describe(a);
  EXPECT_EQ(inspect(a).owner, self);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w1.join());
  ASSERT_TRUE(w2.join());
  EXPECT_EQ(rc1.load(), JITLOCK_OK);
  EXPECT_EQ(rc2.load(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.holds, 0u);
  EXPECT_EQ(i.entry_queued, 0u);
}

TEST_F(TransitionsTest, UnstructuredExitOfAnonymouslyInflatedObject) {
  // [A B]; a contender inflates A; main exits A first (not at the top).
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  Worker w;
  std::atomic<int> rc{-1};
  ASSERT_TRUE(contendAndQueue(w, a, &rc)) << describe(a);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join()) << describe(a);
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(lockStack(self), std::vector<void *>{b});
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(b->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, EnterWaitsOutTheEmbedderState) {
  // Low bits 11 belong to the embedder (e.g. a GC mark): an enter waits
  // until the embedder gives the header back, then locks normally.
  Obj *a = newObj(kEmbedderBits | 0x3);
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), a); });
  // Whether or not the worker is already spinning, it must not lock a
  // header in the embedder state.
  EXPECT_EQ(a->hdr(), kEmbedderBits | 0x3);
  a->header.store(kUnlockedHeader, std::memory_order_release);
  ASSERT_TRUE(w.join()) << "enter never noticed the header was given back";
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), kUnlockedHeader & ~kLockMask);
  EXPECT_EQ(jitlock_rt_owner_of(a), w.thread());
  w.call(
      [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK); });
  EXPECT_EQ(a->hdr(), kUnlockedHeader);
}

TEST_F(TransitionsTest, ContentionWithoutSpinning) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.spin_limit = 0;
  reconfigure(cfg);
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w1, w2;
  for (Worker *w : {&w1, &w2})
    w->post([w, a] {
      for (int k = 0; k < 50; ++k) {
        EXPECT_EQ(jitlock_rt_monitor_enter(w->thread(), a), JITLOCK_OK);
        a->payload++;
        EXPECT_EQ(jitlock_rt_monitor_exit(w->thread(), a), JITLOCK_OK);
      }
    });
  ASSERT_TRUE(waitEntryQueued(a)) << describe(a);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w1.join());
  ASSERT_TRUE(w2.join());
  EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(a->payload, 100u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
}

TEST_F(TransitionsTest, EmbedderBitsSurviveEveryTransition) {
  // Headers with no embedder bits, with ours, and with every one of them set.
  const uint64_t allEmbedder = ~(kHashMask | kLockMask);
  for (uint64_t base : {uint64_t(0), kEmbedderBits, allEmbedder}) {
    SCOPED_TRACE(testing::Message() << "embedder bits 0x" << std::hex << base);
    const uint64_t unlocked = base | kUnlocked;
    Obj *a = newObj(unlocked), *b = newObj(unlocked);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    EXPECT_EQ(a->hdr(), base);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    EXPECT_EQ(a->hdr(), base);
    ASSERT_EQ(enter(b), JITLOCK_OK);
    ASSERT_EQ(enter(a), JITLOCK_OK); // inflates A
    EXPECT_EQ(a->lowBits(), kMonitor);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(exit(b), JITLOCK_OK);
    EXPECT_EQ(b->hdr(), unlocked);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);

    // Contention: anonymous inflation and handover.
    Obj *c = newObj(unlocked);
    ASSERT_EQ(enter(c), JITLOCK_OK);
    {
      Worker w;
      ASSERT_TRUE(contendAndQueue(w, c)) << describe(c);
      ASSERT_EQ(exit(c), JITLOCK_OK);
      ASSERT_TRUE(w.join());
    }
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    EXPECT_EQ(a->hdr(), unlocked);
    EXPECT_EQ(b->hdr(), unlocked);
    EXPECT_EQ(c->hdr(), unlocked);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
  }
}

TEST_F(TransitionsTest, EmbedderOwnedHeaderIsReported) {
  Obj *e = newObj(kEmbedderBits | 0x3);
  jitlock_lock_info i = inspect(e);
  EXPECT_EQ(i.state, JITLOCK_STATE_EMBEDDER);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(jitlock_rt_owner_of(e), nullptr);
  EXPECT_FALSE(jitlock_rt_holds_lock(self, e));
  EXPECT_EQ(e->hdr(), kEmbedderBits | 0x3);
}

TEST_F(TransitionsTest, AttachIsIdempotentAndIdsAreUnique) {
  EXPECT_EQ(jitlock_rt_attach(), self);
  EXPECT_EQ(jitlock_rt_current(), self);
  uint64_t mainId = jitlock_rt_thread_id(self);
  EXPECT_NE(mainId, 0u);

  std::set<uint64_t> ids{mainId};
  std::set<jitlock_thread *> live{self};
  for (int k = 0; k < 3; ++k) {
    Worker w;
    EXPECT_NE(w.thread(), nullptr);
    EXPECT_TRUE(ids.insert(w.id()).second) << "thread id reused: " << w.id();
    EXPECT_NE(w.thread(), self);
    w.call([&] {
      EXPECT_EQ(jitlock_rt_current(), w.thread());
      EXPECT_EQ(jitlock_rt_attach(), w.thread());
    });
  }
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_current(), nullptr);
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(jitlock_rt_current(), self);
  EXPECT_TRUE(ids.insert(jitlock_rt_thread_id(self)).second)
      << "re-attaching must not reuse an id";
}

TEST_F(TransitionsTest, ShutdownFreesMonitorsAndRestoresHeaders) {
  std::vector<Obj *> objs;
  Obj *b = newObj();
  for (int k = 0; k < 5; ++k) {
    Obj *a = newObj();
    objs.push_back(a);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    ASSERT_EQ(enter(b), JITLOCK_OK);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(exit(b), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);
  }
  EXPECT_EQ(stats().inflations >= 5, true);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(stats().monitors_alive, 0u);
  for (Obj *a : objs)
    EXPECT_EQ(a->hdr(), kUnlockedHeader);

  // The runtime is usable again.
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
  ASSERT_EQ(enter(objs[0]), JITLOCK_OK);
  EXPECT_EQ(inspect(objs[0]).state, JITLOCK_STATE_FAST);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(objs[0]), JITLOCK_OK);
  EXPECT_EQ(inspect(objs[0]).state, JITLOCK_STATE_INFLATED);
  ASSERT_EQ(exit(objs[0]), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(objs[0]), JITLOCK_OK);
}

TEST_F(TransitionsTest, StatusNames) {
  EXPECT_STREQ(jitlock_rt_status_name(JITLOCK_OK), "JITLOCK_OK");
  EXPECT_STREQ(jitlock_rt_status_name(JITLOCK_ENOT_OWNER),
               "JITLOCK_ENOT_OWNER");
  EXPECT_STREQ(jitlock_rt_status_name(JITLOCK_ESTATE), "JITLOCK_ESTATE");
  EXPECT_NE(jitlock_rt_status_name(12345), nullptr);
}

} // namespace
