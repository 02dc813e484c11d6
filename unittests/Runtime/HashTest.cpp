//===- HashTest.cpp - Identity hash and header configuration --------------===//
//
// Installing or reading an identity hash never inflates and the hash survives
// fast locking, inflation, contention, wait and shutdown. Also covers the
// configurable header (hash field position, disabled hashes, header offsets).
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <set>

using namespace jitlock_test;

namespace {

class HashTest : public RuntimeTest {};

uint64_t hashBits(uint64_t h) { return h << kHashShift; }

TEST_F(HashTest, InstallOnUnlockedDoesNotInflate) {
  Obj *a = newObj();
  EXPECT_EQ(jitlock_rt_peek_hash(a), 0u);
  jitlock_rt_stats s0 = stats();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  jitlock_rt_stats s1 = stats();
  EXPECT_NE(h, 0u);
  EXPECT_LT(h, 1ull << kHashBits);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_UNLOCKED);
  EXPECT_EQ(s1.inflations, s0.inflations);
  EXPECT_EQ(s1.monitors_alive, s0.monitors_alive);
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), h);
  EXPECT_EQ(jitlock_rt_identity_hash(nullptr, a), h);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));

  // Locking keeps it.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(),
            withTableHash(a, (kUnlockedHeader & ~kLockMask) | hashBits(h)));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, UnattachedThreadCanHash) {
  Obj *a = newObj();
  uint64_t h = 0;
  std::thread t([&] {
    EXPECT_EQ(jitlock_rt_current(), nullptr);
    h = jitlock_rt_identity_hash(nullptr, a);
  });
  t.join();
  EXPECT_NE(h, 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, InstallOnFastLockedByCallerStaysFast) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  jitlock_rt_stats s0 = stats();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(stats().inflations, s0.inflations);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST) << describe(a);
  EXPECT_EQ(inspect(a).owner, self);
  EXPECT_EQ(a->hdr(),
            withTableHash(a, (kUnlockedHeader & ~kLockMask) | hashBits(h)));
  EXPECT_EQ(lockStack(self), (std::vector<void *>{a, b}));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, InstallOnObjectFastLockedByAnotherThread) {
  Obj *a = newObj();
  Worker w;
  w.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), a), JITLOCK_OK);
  });
  uint64_t h = jitlock_rt_identity_hash(self, a);
  EXPECT_NE(h, 0u);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.state, JITLOCK_STATE_FAST) << describe(a);
  EXPECT_EQ(i.owner, w.thread());
  EXPECT_EQ(i.holds, 2u);
  // The owner's exits (the last one CASes 00 -> 01) cope with the new hash.
  w.call([&] {
    EXPECT_EQ(jitlock_rt_identity_hash(w.thread(), a), h);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), a), JITLOCK_OK);
  });
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
}

TEST_F(HashTest, SurvivesInflationAndShutdown) {
  Obj *a = newObj(), *b = newObj();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  ASSERT_NE(h, 0u);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(a->lowBits(), kMonitor);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), h);
  EXPECT_EQ(jitlock_rt_identity_hash(nullptr, a), h);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

TEST_F(HashTest, InstalledWhileInflatedSurvivesShutdown) {
  Obj *a = newObj(), *b = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  expectHashOfInflated(a);
  jitlock_rt_stats s0 = stats();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(stats().inflations, s0.inflations);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(inspect(a).holds, 2u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, SurvivesContentionAndWait) {
  Obj *a = newObj();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_wait_timed(self, a, 0), JITLOCK_ETIMEDOUT);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  ASSERT_EQ(exit(a), JITLOCK_OK);

  Obj *c = newObj();
  uint64_t hc = jitlock_rt_identity_hash(self, c);
  ASSERT_EQ(enter(c), JITLOCK_OK);
  Worker w;
  w.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(w.thread(), c), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_identity_hash(w.thread(), c), hc);
    EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), c), JITLOCK_OK);
  });
  ASSERT_TRUE(waitEntryQueued(c)) << describe(c);
  EXPECT_EQ(jitlock_rt_peek_hash(c), hc) << "anonymous inflation lost the hash";
  ASSERT_EQ(exit(c), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  w.stop();
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
  EXPECT_EQ(c->hdr(), withTableHash(c, kUnlockedHeader | hashBits(hc)));
}

TEST_F(HashTest, InstallWhileAnonymouslyInflated) {
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  Worker w;
  ASSERT_TRUE(contendAndQueue(w, a)) << describe(a);
  expectHashOfInflated(a);
  uint64_t h = jitlock_rt_identity_hash(self, a);
  EXPECT_NE(h, 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(inspect(a).anonymous_owner, 1u) << "hashing must not fix owners";
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_TRUE(w.join());
  w.stop();
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, HashesAreNonZeroAndVaried) {
  std::set<uint64_t> seen;
  for (int k = 0; k < 100; ++k) {
    Obj *o = newObj();
    uint64_t h = jitlock_rt_identity_hash(k % 2 ? self : nullptr, o);
    ASSERT_NE(h, 0u);
    ASSERT_LT(h, 1ull << kHashBits);
    seen.insert(h);
  }
  EXPECT_GE(seen.size(), 50u) << "identity hashes are suspiciously repetitive";
}

TEST_F(HashTest, PreinstalledHashIsKept) {
  const uint64_t pre = 0x1234567;
  Obj *a = newObj(kUnlockedHeader | hashBits(pre));
  EXPECT_EQ(jitlock_rt_peek_hash(a), pre);
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), pre);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(pre)));
}

TEST_F(HashTest, ConcurrentInstallAgreesAndRacesWithLocking) {
  // Several threads hash the same object while one of them locks and
  // unlocks it: the hash CAS and the lock CASes must not lose each other.
  Obj *a = newObj();
  constexpr int N = 3;
  std::vector<std::unique_ptr<Worker>> ws;
  std::vector<uint64_t> got(N, 0);
  for (int k = 0; k < N; ++k)
    ws.push_back(std::make_unique<Worker>());
  ws[0]->post([&, t = ws[0]->thread()] {
    for (int r = 0; r < 2000; ++r) {
      ASSERT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
      if (r == 1000)
        got[0] = jitlock_rt_identity_hash(t, a);
      ASSERT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    }
  });
  for (int k = 1; k < N; ++k)
    ws[k]->post([&, k, t = ws[k]->thread()] {
      got[k] = jitlock_rt_identity_hash(k == 1 ? t : nullptr, a);
    });
  for (auto &w : ws)
    ASSERT_TRUE(w->join());
  uint64_t h = jitlock_rt_peek_hash(a);
  EXPECT_NE(h, 0u);
  for (int k = 0; k < N; ++k)
    EXPECT_EQ(got[k], h) << k;
  EXPECT_FALSE(jitlock_rt_holds_lock(ws[0]->thread(), a));
  ws.clear();
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader | hashBits(h)));
}

TEST_F(HashTest, DisabledHashes) {
  if (testMonitorStorage() == JITLOCK_MONITORS_TABLE)
    GTEST_SKIP() << "table monitor storage needs hashes";
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.hash_bits = 0;
  reconfigure(cfg);
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  EXPECT_EQ(l.hash_bits, 0u);
  Obj *a = newObj();
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(a), 0u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), 0u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(HashTest, CustomHashField) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.hash_shift = 32;
  cfg.hash_bits = 24;
  reconfigure(cfg);
  jitlock_rt_layout l;
  jitlock_rt_get_layout(&l);
  EXPECT_EQ(l.hash_shift, 32u);
  EXPECT_EQ(l.hash_bits, 24u);
  const uint64_t field = ((1ull << 24) - 1) << 32;
  // Embedder bits everywhere outside [32,56) and [0,2).
  const uint64_t emb = (0xABull << 56) | 0xCDEF00ull | 0x14;
  Obj *a = newObj(emb | kUnlocked), *b = newObj(emb | kUnlocked);
  uint64_t h = jitlock_rt_identity_hash(self, a);
  EXPECT_NE(h, 0u);
  EXPECT_LT(h, 1ull << 24);
  EXPECT_EQ(a->hdr(), withTableHash(a, emb | kUnlocked | (h << 32)));
  EXPECT_EQ(a->hdr() & ~field, emb | kUnlocked);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, emb | (h << 32)));
  ASSERT_EQ(enter(b), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, emb | kUnlocked | (h << 32)));
  EXPECT_EQ(b->hdr(), withTableHash(b, emb | kUnlocked));
  self = jitlock_rt_attach();
}

// An object whose header is not at offset 0.
struct alignas(16) OffsetObj {
  uint64_t before;
  std::atomic<uint64_t> header;
  uint64_t after;
};

TEST_F(HashTest, PositiveAndNegativeHeaderOffsets) {
  for (int32_t off : {8, -8}) {
    SCOPED_TRACE(testing::Message() << "header_offset " << off);
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.header_offset = off;
    reconfigure(cfg);
    jitlock_rt_layout l;
    jitlock_rt_get_layout(&l);
    EXPECT_EQ(l.header_offset, off);

    // Static so that a failing iteration never leaves a monitor pointing
    // at a dead stack object when TearDown shuts the runtime down.
    static OffsetObj storage[2];
    OffsetObj &oa = storage[0], &ob = storage[1];
    oa.before = 0x1111, oa.after = 0x2222, oa.header = kUnlockedHeader;
    ob.before = 0x3333, ob.after = 0x4444, ob.header = kUnlockedHeader;
    // The object pointer is such that pointer + off == &header.
    auto objOf = [off](OffsetObj &o) {
      return (void *)((char *)&o.header - off);
    };
    void *a = objOf(oa), *b = objOf(ob);
    ASSERT_EQ(enter(a), JITLOCK_OK);
    EXPECT_EQ(oa.header.load(), kUnlockedHeader & ~kLockMask);
    EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
    uint64_t h = jitlock_rt_identity_hash(self, a);
    EXPECT_NE(h, 0u);
    ASSERT_EQ(enter(b), JITLOCK_OK);
    ASSERT_EQ(enter(a), JITLOCK_OK); // inflates
    EXPECT_EQ(oa.header.load() & kLockMask, kMonitor);
    EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
    EXPECT_EQ(jitlock_rt_peek_hash(a), h);
    EXPECT_EQ(lockStack(self), std::vector<void *>{b});
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(exit(b), JITLOCK_OK);
    ASSERT_EQ(exit(a), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    EXPECT_EQ(oa.header.load(), kUnlockedHeader | hashBits(h));
    EXPECT_EQ(ob.header.load(), kUnlockedHeader);
    EXPECT_EQ(oa.before, 0x1111u);
    EXPECT_EQ(oa.after, 0x2222u);
    EXPECT_EQ(ob.before, 0x3333u);
    EXPECT_EQ(ob.after, 0x4444u);
    self = jitlock_rt_attach();
  }
}

} // namespace
