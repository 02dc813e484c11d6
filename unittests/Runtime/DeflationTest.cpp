//===- DeflationTest.cpp - Deflating idle monitors ------------------------===//
//
// jitlock_rt_deflate_idle restores every idle monitor's object to its exact
// unlocked header (hash and embedder bits kept) and frees the monitor for
// reuse; busy monitors (owned, recursive, waited on, entry-queued,
// anonymously owned) are left alone. Unless a test says otherwise, every
// call here is made while the other attached threads are idle: native in our
// own code, parked in the runtime, or finished.
//
// The races of the concurrent protocol (A1-A6 in Synchronizer.cpp) are forced
// here, one interleaving at a time, through the runtime's test hooks: an
// enterer that cancels a deflation or finds it decided, and an identity hash
// whose monitor is deflated and reused for another object under it. The
// deflation thread's policy and misuse close the file; the random stress is
// in DeflationStressTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "Synchronizer.h"

#include <cinttypes>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

using namespace jitlock_test;

namespace {

class DeflationTest : public RuntimeTest {
protected:
  // Inflates `o` and leaves it idle: a timed wait needs a monitor.
  void inflateIdle(Obj *o) {
    ASSERT_EQ(enter(o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
    ASSERT_EQ(exit(o), JITLOCK_OK);
    ASSERT_EQ(o->lowBits(), kMonitor);
  }
  void setHeavy() {
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
    reconfigure(cfg);
  }
  // The monitor `o`'s header names, as the runtime finds it.
  static uintptr_t monitorAddr(const Obj *o) {
    uint64_t h = o->hdr();
    if ((h & kLockMask) != kMonitor)
      return 0;
    return uintptr_t(jitlock::storage::monitorFor(o, h));
  }
};

TEST_F(DeflationTest, NothingToDeflate) {
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
  Obj *a = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK); // fast: no monitor
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

TEST_F(DeflationTest, IdleMonitorGetsItsExactHeaderBack) {
  // Unusual embedder bits too: every bit outside the lock and hash fields.
  const uint64_t odd = (~kHashMask & ~kLockMask) | kUnlocked;
  Obj *a = newObj(), *b = newObj(odd);
  jitlock_rt_stats s0 = stats();
  // a by non-adjacent re-entry, b by wait.
  Obj *x = newObj();
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  ASSERT_EQ(exit(x), JITLOCK_OK);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  inflateIdle(b);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_INFLATED);
  EXPECT_EQ(stats().monitors_alive, 2u);

  EXPECT_EQ(jitlock_rt_deflate_idle(), 2u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), withTableHash(b, odd));
  EXPECT_EQ(x->hdr(), withTableHash(x, kUnlockedHeader));
  jitlock_rt_stats s1 = stats();
  EXPECT_EQ(s1.monitors_alive, 0u);
  EXPECT_EQ(s1.inflations - s0.inflations, 2u) << "deflation inflates nothing";
  for (Obj *o : {a, b}) {
    jitlock_lock_info i = inspect(o);
    EXPECT_EQ(i.state, JITLOCK_STATE_UNLOCKED);
    EXPECT_EQ(i.owner, nullptr);
    EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
  }
  // Fast locking works on the restored headers.
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(inspect(b).state, JITLOCK_STATE_FAST);
  EXPECT_EQ(b->hdr(), withTableHash(b, odd & ~kLockMask));
  EXPECT_EQ(stats().fast_locks - s1.fast_locks, 1u);
  ASSERT_EQ(exit(b), JITLOCK_OK);
  EXPECT_EQ(b->hdr(), withTableHash(b, odd));
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
}

TEST_F(DeflationTest, HashesAreKept) {
  Obj *before = newObj(), *during = newObj(), *none = newObj();
  uint64_t hb = jitlock_rt_identity_hash(self, before);
  uint64_t withHash = before->hdr();
  inflateIdle(before);
  inflateIdle(during);
  inflateIdle(none);
  uint64_t hd = jitlock_rt_identity_hash(self, during);
  ASSERT_NE(hd, 0u);
  EXPECT_EQ(during->lowBits(), kMonitor) << "hashing does not deflate";
  EXPECT_EQ(jitlock_rt_deflate_idle(), 3u);
  EXPECT_EQ(before->hdr(), withTableHash(before, withHash));
  EXPECT_EQ(during->hdr(),
            withTableHash(during,
                          kUnlockedHeader | ((hd << kHashShift) & kHashMask)));
  EXPECT_EQ(none->hdr(), withTableHash(none, kUnlockedHeader));
  EXPECT_EQ(jitlock_rt_peek_hash(before), hb);
  EXPECT_EQ(jitlock_rt_identity_hash(self, during), hd);
  expectHashOfInflated(none);
}

TEST_F(DeflationTest, BusyMonitorsAreSkipped) {
  Obj *recursive = newObj(), *owned = newObj(), *waited = newObj(),
      *queued = newObj(), *anonymous = newObj(), *idle = newObj(),
      *x = newObj();
  // Owned recursively by main: A X A.
  ASSERT_EQ(enter(recursive), JITLOCK_OK);
  ASSERT_EQ(enter(x), JITLOCK_OK);
  ASSERT_EQ(enter(recursive), JITLOCK_OK);
  // Owned once by main, inflated; a worker queues on it.
  ASSERT_EQ(enter(queued), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_wait_timed(self, queued, 0), JITLOCK_ETIMEDOUT);
  inflateIdle(owned);
  ASSERT_EQ(enter(owned), JITLOCK_OK);
  inflateIdle(idle);

  Worker waiter, enterer, fastOwner, contender;
  std::atomic<int> waitRc{-1};
  waiter.post([&] {
    jitlock_thread *t = waiter.thread();
    ASSERT_EQ(jitlock_rt_monitor_enter(t, waited), JITLOCK_OK);
    waitRc = jitlock_rt_wait(t, waited);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, waited), JITLOCK_OK);
  });
  enterer.post([&] {
    EXPECT_EQ(jitlock_rt_monitor_enter(enterer.thread(), queued), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(enterer.thread(), queued), JITLOCK_OK);
  });
  fastOwner.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(fastOwner.thread(), anonymous), 0);
  });
  contender.post([&] {
    jitlock_thread *t = contender.thread();
    EXPECT_EQ(jitlock_rt_monitor_enter(t, anonymous), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, anonymous), JITLOCK_OK);
  });
  // In the wait set first, then the monitor is released; after that the
  // waiter only touches its own node until it is notified.
  ASSERT_TRUE(waitUntil([&] {
    jitlock_lock_info i = inspect(waited);
    return i.waiting == 1 && i.owner == nullptr;
  })) << describe(waited);
  ASSERT_TRUE(waitEntryQueued(queued)) << describe(queued);
  ASSERT_TRUE(waitEntryQueued(anonymous)) << describe(anonymous);
  ASSERT_EQ(inspect(anonymous).anonymous_owner, 1u);
  ASSERT_EQ(stats().monitors_alive, 6u);

  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u) << "only `idle`";
  EXPECT_EQ(idle->hdr(), withTableHash(idle, kUnlockedHeader));
  EXPECT_EQ(stats().monitors_alive, 5u);
  for (Obj *o : {recursive, owned, waited, queued, anonymous})
    EXPECT_EQ(o->lowBits(), kMonitor) << describe(o);
  jitlock_lock_info i = inspect(recursive);
  EXPECT_EQ(i.owner, self);
  EXPECT_EQ(i.holds, 2u);
  EXPECT_EQ(inspect(owned).owner, self);
  EXPECT_EQ(inspect(waited).waiting, 1u);
  EXPECT_EQ(inspect(queued).entry_queued, 1u);
  EXPECT_EQ(inspect(anonymous).owner, fastOwner.thread());
  EXPECT_EQ(inspect(anonymous).anonymous_owner, 1u);

  // Everything still works after the pass that skipped them.
  ASSERT_EQ(enter(waited), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_notify(self, waited), JITLOCK_OK);
  ASSERT_EQ(exit(waited), JITLOCK_OK);
  ASSERT_TRUE(waiter.join());
  EXPECT_EQ(waitRc.load(), JITLOCK_OK);
  ASSERT_EQ(exit(queued), JITLOCK_OK);
  ASSERT_TRUE(enterer.join());
  fastOwner.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(fastOwner.thread(), anonymous), 0);
  });
  ASSERT_TRUE(contender.join());
  ASSERT_EQ(exit(recursive), JITLOCK_OK);
  ASSERT_EQ(exit(x), JITLOCK_OK);
  ASSERT_EQ(exit(recursive), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 4u) << "`owned` is still held";
  ASSERT_EQ(exit(owned), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(stats().monitors_alive, 0u);
  for (Obj *o : {recursive, owned, waited, queued, anonymous, idle, x})
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader)) << (void *)o;
}

TEST_F(DeflationTest, DeflatedMonitorIsReused) {
  Obj *a = newObj(), *b = newObj();
  inflateIdle(a);
  uintptr_t m = monitorAddr(a);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  // Re-inflation after deflation: same object, same storage.
  inflateIdle(a);
  EXPECT_EQ(monitorAddr(a), m);
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).owner, self);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  // Another object.
  inflateIdle(b);
  EXPECT_EQ(monitorAddr(b), m);
  jitlock_lock_info i = inspect(b);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.holds, 0u);
  EXPECT_EQ(inspect(a).state, JITLOCK_STATE_UNLOCKED);
  EXPECT_EQ(stats().monitors_alive, 1u);
}

TEST_F(DeflationTest, RootsAndShutdownAfterDeflation) {
  Obj *a = newObj(), *b = newObj(), *c = newObj();
  inflateIdle(a);
  inflateIdle(b);
  inflateIdle(c);
  ASSERT_EQ(enter(b), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 2u);
  struct Roots {
    std::vector<void *> monitorObjs;
    std::vector<jitlock_thread *> owners;
  } roots;
  jitlock_rt_enumerate_roots(
      [](void *ctx, void **slot, uint32_t kind, jitlock_thread *owner) {
        auto *r = static_cast<Roots *>(ctx);
        if (kind == JITLOCK_ROOT_MONITOR) {
          r->monitorObjs.push_back(*slot);
          r->owners.push_back(owner);
        }
      },
      &roots);
  EXPECT_EQ(roots.monitorObjs, std::vector<void *>{b});
  EXPECT_EQ(roots.owners, std::vector<jitlock_thread *>{self});
  ASSERT_EQ(exit(b), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u) << "no attached thread needed";
  EXPECT_EQ(stats().monitors_alive, 0u);
  // Shutdown restores what deflation left, and frees the free list.
  self = jitlock_rt_attach();
  inflateIdle(c);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(stats().monitors_alive, 0u);
  for (Obj *o : {a, b, c})
    EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
  self = jitlock_rt_attach();
  // Usable again after shutdown.
  inflateIdle(a);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

// Heavy mode: every enter of a fresh object creates a monitor. With a
// deflation every 1000 objects, the number alive stays bounded and the
// storage is recycled.
TEST_F(DeflationTest, HeavyChurnStaysBounded) {
  setHeavy();
  constexpr size_t kBatch = 1000, kTotal = 100000;
  std::vector<Obj *> batch;
  for (size_t i = 0; i < kBatch; ++i)
    batch.push_back(newObj());
  std::set<uintptr_t> storage;
  jitlock_rt_stats s0 = stats();
  uint64_t maxAlive = 0, deflated = 0;
  for (size_t n = 0; n < kTotal; n += kBatch) {
    // Fresh objects in recycled memory, with varying embedder bits.
    const uint64_t fresh = kUnlockedHeader | (uint64_t(n / kBatch % 256) << 40);
    for (Obj *o : batch)
      o->header.store(fresh, std::memory_order_relaxed);
    for (Obj *o : batch) {
      ASSERT_EQ(enter(o), JITLOCK_OK);
      storage.insert(monitorAddr(o));
      ASSERT_EQ(exit(o), JITLOCK_OK);
    }
    maxAlive = std::max(maxAlive, stats().monitors_alive);
    deflated += jitlock_rt_deflate_idle();
    ASSERT_EQ(stats().monitors_alive, 0u);
    for (Obj *o : batch)
      ASSERT_EQ(o->hdr(), withTableHash(o, fresh));
  }
  jitlock_rt_stats s1 = stats();
  EXPECT_EQ(s1.inflations - s0.inflations, kTotal);
  EXPECT_EQ(deflated, kTotal);
  EXPECT_EQ(maxAlive, kBatch);
  // Index storage carves whole free batches: the thread's list may hold
  // what is left of the last one.
  EXPECT_LE(storage.size(), kBatch + jitlock::FreeBatchSize - 1)
      << "deflated monitors are reused";
}

// Lightweight mode: contention inflates; once idle, deflation takes the
// monitors away, and contention inflates again.
TEST_F(DeflationTest, ContentionInflatesAndDeflationUndoes) {
  constexpr int kThreads = 4, kObjs = 3, kIters = 3000;
  const uint64_t seed = std::random_device{}();
  std::printf("DeflationTest.ContentionInflatesAndDeflationUndoes seed=%" PRIu64
              "\n",
              seed);
  Obj *objs[kObjs];
  uint64_t counters[kObjs] = {};
  for (Obj *&o : objs)
    o = newObj();
  for (int round = 0; round < 3; ++round) {
    jitlock_rt_stats s0 = stats();
    std::vector<std::thread> threads;
    for (int id = 0; id < kThreads; ++id)
      threads.emplace_back([&, id] {
        jitlock_thread *t = jitlock_rt_attach();
        std::mt19937_64 rng(seed + 977 * id + round);
        for (int i = 0; i < kIters; ++i) {
          int k = int(rng() % kObjs);
          EXPECT_EQ(jitlock_rt_monitor_enter(t, objs[k]), JITLOCK_OK);
          ++counters[k];
          EXPECT_EQ(jitlock_rt_monitor_exit(t, objs[k]), JITLOCK_OK);
        }
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
      });
    for (auto &th : threads)
      th.join();
    uint64_t sum = 0;
    for (uint64_t c : counters)
      sum += c;
    EXPECT_EQ(sum, uint64_t(kThreads) * kIters * (round + 1))
        << "seed " << seed;
    size_t inflated = 0;
    for (Obj *o : objs)
      inflated += o->lowBits() == kMonitor;
    jitlock_rt_stats s1 = stats();
    EXPECT_EQ(s1.monitors_alive, inflated);
    EXPECT_EQ(jitlock_rt_deflate_idle(), inflated);
    EXPECT_EQ(stats().monitors_alive, 0u);
    for (Obj *o : objs)
      EXPECT_EQ(o->hdr(), withTableHash(o, kUnlockedHeader));
    std::printf("  round %d: %" PRIu64 " inflations, %zu deflated\n", round,
                s1.inflations - s0.inflations, inflated);
  }
}

TEST_F(DeflationTest, RestoreLocksAfterDeflation) {
  // A stopped thread's relock finds the monitor gone and the header back.
  Obj *a = newObj(), *b = newObj();
  inflateIdle(a);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  Worker w;
  std::vector<jitlock_relock_entry> frame{{a, JITLOCK_RELOCK_ELIDED},
                                          {b, JITLOCK_RELOCK_ELIDED},
                                          {a, JITLOCK_RELOCK_ELIDED}};
  ASSERT_EQ(jitlock_rt_restore_locks(w.thread(), frame.data(), frame.size(), 0),
            JITLOCK_OK);
  // A B A: a is inflated for the stopped thread again.
  EXPECT_EQ(inspect(a).owner, w.thread());
  EXPECT_EQ(inspect(a).holds, 2u);
  EXPECT_EQ(inspect(b).owner, w.thread());
  EXPECT_EQ(jitlock_rt_deflate_idle(), 0u);
  w.call([&] {
    jitlock_thread *t = w.thread();
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
  });
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

//===-- Forced interleavings of the concurrent protocol -------------------===//

using HashHook = HookScope<jitlock::IdentityHashStage, void *>;
using DeflaterHook = HookScope<jitlock::DeflationStage, jitlock::Monitor &>;

// A4, cancel: an enterer finds the deflater's marker in the owner word (after
// A1, before A3), takes the monitor from it and releases it again; the
// deflation gives up, the monitor stays the object's and still works.
TEST_F(DeflationTest, EntererCancelsADeflationInProgress) {
  Obj *a = newObj();
  inflateIdle(a);
  uintptr_t m = monitorAddr(a);
  Worker w;
  int fired = 0;
  jitlock_deflation_stats s0 = deflationStats();
  {
    DeflaterHook hook(jitlock::DeflationTestHook,
                      [&](jitlock::DeflationStage stage, jitlock::Monitor &) {
                        if (stage != jitlock::DeflationStage::OwnerMarked ||
                            fired++)
                          return;
                        w.call([&] {
                          jitlock_thread *t = w.thread();
                          EXPECT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
                          EXPECT_EQ(inspect(a).owner, t);
                          EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
                        });
                      });
    EXPECT_EQ(jitlock_rt_deflate_idle(), 0u) << "the enterer won";
  }
  ASSERT_EQ(fired, 1);
  jitlock_deflation_stats s1 = deflationStats();
  EXPECT_EQ(s1.cancelled - s0.cancelled, 1u);
  EXPECT_EQ(s1.handshakes, s0.handshakes) << "nothing to free, no handshake";
  EXPECT_EQ(monitorAddr(a), m);
  EXPECT_EQ(a->lowBits(), kMonitor);
  jitlock_lock_info i = inspect(a);
  EXPECT_EQ(i.owner, nullptr);
  EXPECT_EQ(i.entry_queued, 0u);
  // Owner word and contention count are back to a free monitor's.
  ASSERT_EQ(enter(a), JITLOCK_OK);
  EXPECT_EQ(inspect(a).owner, self);
  ASSERT_EQ(exit(a), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
}

// A4, too late: an enterer finds the deflation decided (A3) before the
// header is restored. It restores the header itself (A5) and fast-locks the
// object; the deflater's own A5 then finds its work done.
TEST_F(DeflationTest, EntererFindsTheDeflationDecidedAndHelps) {
  Obj *a = newObj();
  uint64_t h = jitlock_rt_identity_hash(self, a);
  inflateIdle(a);
  const uint64_t restored = kUnlockedHeader | ((h << kHashShift) & kHashMask);
  Worker w;
  int fired = 0;
  {
    DeflaterHook hook(jitlock::DeflationTestHook,
                      [&](jitlock::DeflationStage stage, jitlock::Monitor &) {
                        if (stage != jitlock::DeflationStage::Decided ||
                            fired++)
                          return;
                        EXPECT_EQ(a->lowBits(), kMonitor) << "not restored yet";
                        w.call([&] {
                          jitlock_thread *t = w.thread();
                          EXPECT_EQ(jitlock_rt_monitor_enter(t, a), JITLOCK_OK);
                          EXPECT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
                          EXPECT_EQ(jitlock_rt_monitor_exit(t, a), JITLOCK_OK);
                        });
                        EXPECT_EQ(a->hdr(), withTableHash(a, restored))
                            << "restored by the enterer";
                      });
    EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  }
  ASSERT_EQ(fired, 1);
  EXPECT_EQ(a->hdr(), withTableHash(a, restored));
  EXPECT_EQ(jitlock_rt_peek_hash(a), h);
  EXPECT_EQ(stats().monitors_alive, 0u);
}

// The identity-hash race: the hash loads monitor m from a's header, and m is
// deflated and reused for b before the hash reads m's displaced header. The
// hook runs on the hashing thread itself (its own handshake runs there), as
// for a caller that no handshake covers. b is hashed or not.
class HashReuseTest : public DeflationTest,
                      public ::testing::WithParamInterface<bool> {};

TEST_P(HashReuseTest, HashRechecksTheMonitorAfterReuse) {
  if (testMonitorStorage() == JITLOCK_MONITORS_TABLE)
    GTEST_SKIP() << "table storage keeps the hash in the header: a hash "
                    "reads no monitor";
  const bool bHashed = GetParam();
  Obj *a = newObj(), *b = newObj();
  const uint64_t hb = bHashed ? jitlock_rt_identity_hash(self, b) : 0;
  inflateIdle(a);
  const uintptr_t m = monitorAddr(a);
  int fired = 0;
  uint64_t ha;
  {
    HashHook hook(jitlock::IdentityHashTestHook,
                  [&](jitlock::IdentityHashStage stage, void *obj) {
                    if (stage != jitlock::IdentityHashStage::MonitorLoaded ||
                        obj != a || fired++)
                      return;
                    EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
                    inflateIdle(b);
                  });
    ha = jitlock_rt_identity_hash(self, a);
  }
  ASSERT_EQ(fired, 1);
  ASSERT_EQ(monitorAddr(b), m) << "the interleaving did not happen: b did "
                                  "not get a's deflated monitor";
  EXPECT_NE(ha, 0u);
  EXPECT_NE(ha, hb) << "a got b's hash";
  EXPECT_EQ(jitlock_rt_peek_hash(a), ha) << "a's hash is not a's";
  EXPECT_EQ(jitlock_rt_peek_hash(b), hb) << "b's hash changed";
  EXPECT_EQ(jitlock_rt_identity_hash(self, a), ha);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader |
                                           ((ha << kHashShift) & kHashMask)));
}

INSTANTIATE_TEST_SUITE_P(DeflationTest, HashReuseTest, ::testing::Bool(),
                         [](const auto &info) {
                           return info.param ? "OtherObjectHashed"
                                             : "OtherObjectUnhashed";
                         });

// The same race, and back: m goes to b, then, after the hash has read b's
// displaced header, back to a. The header names m again when the hash
// checks it; only m's generation tells that what was read was b's.
TEST_F(DeflationTest, HashRechecksTheGenerationAfterReuseAndBack) {
  if (testMonitorStorage() == JITLOCK_MONITORS_TABLE)
    GTEST_SKIP() << "table storage keeps the hash in the header: a hash "
                    "reads no monitor";
  Obj *a = newObj(), *b = newObj();
  const uint64_t hb = jitlock_rt_identity_hash(self, b);
  inflateIdle(a);
  const uintptr_t m = monitorAddr(a);
  int loaded = 0, read = 0;
  uint64_t ha;
  {
    HashHook hook(
        jitlock::IdentityHashTestHook,
        [&](jitlock::IdentityHashStage stage, void *obj) {
          if (obj != a)
            return;
          if (stage == jitlock::IdentityHashStage::MonitorLoaded && !loaded++) {
            EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
            inflateIdle(b);
            EXPECT_EQ(monitorAddr(b), m);
          } else if (stage == jitlock::IdentityHashStage::DisplacedLoaded &&
                     !read++) {
            EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
            inflateIdle(a);
          }
        });
    ha = jitlock_rt_identity_hash(self, a);
  }
  ASSERT_EQ(read, 2) << "the hash did not start over";
  ASSERT_EQ(monitorAddr(a), m) << "the interleaving did not happen";
  EXPECT_NE(ha, hb) << "a got b's hash";
  EXPECT_EQ(jitlock_rt_peek_hash(a), ha);
  EXPECT_EQ(jitlock_rt_peek_hash(b), hb);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader |
                                           ((ha << kHashShift) & kHashMask)));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader |
                                           ((hb << kHashShift) & kHashMask)));
}

// Inside the caller's own safepoint every other thread is stopped already:
// deflated monitors are freed at once, without a handshake.
TEST_F(DeflationTest, InsideASafepointNoHandshake) {
  Obj *a = newObj();
  inflateIdle(a);
  jitlock_deflation_stats s0 = deflationStats();
  ASSERT_EQ(jitlock_rt_enter_native(self), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_leave_native(self), JITLOCK_OK);
  jitlock_deflation_stats s1 = deflationStats();
  EXPECT_EQ(s1.handshakes, s0.handshakes);
  EXPECT_EQ(s1.cycles - s0.cycles, 1u);
  EXPECT_EQ(s1.monitors_deflated - s0.monitors_deflated, 1u);
  // Outside one, a handshake before the monitor is reused.
  inflateIdle(a);
  EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
  EXPECT_EQ(deflationStats().handshakes - s1.handshakes, 1u);
}

//===-- The deflation thread ---------------------------------------------===//

TEST_F(DeflationTest, ThreadMisuseIsRefused) {
  MisuseLog log;
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.misuse_handler = &MisuseLog::handler;
  cfg.misuse_ctx = &log;
  reconfigure(cfg);
  EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_ESTATE) << "not running";
  jitlock_deflation_policy p = deflationPolicy(10, 10);
  p.struct_size = 0;
  EXPECT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_EINVAL);
  p = deflationPolicy(3600 * 1000 + 1, 10);
  EXPECT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_EINVAL);
  p = deflationPolicy(0, 0);
  EXPECT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_EINVAL);
  EXPECT_EQ(deflationStats().thread_running, 0u);
  EXPECT_EQ(log.count(), 4u);

  jitlock_rt_default_deflation_policy(&p);
  EXPECT_EQ(p.struct_size, sizeof p);
  EXPECT_EQ(p.period_ms, 1000u);
  EXPECT_EQ(p.idle_threshold, 1024u);
  ASSERT_EQ(jitlock_rt_start_deflation(nullptr), JITLOCK_OK) << "defaults";
  EXPECT_EQ(deflationStats().thread_running, 1u);
  EXPECT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_ESTATE) << "running";
  EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_ESTATE);
  // From inside a handshake operation: the thread may wait for it.
  struct Probe {
    int stop = -1, start = -1;
    static void fn(void *ctx, jitlock_thread *) {
      auto *pr = static_cast<Probe *>(ctx);
      pr->stop = jitlock_rt_stop_deflation();
      pr->start = jitlock_rt_start_deflation(nullptr);
    }
  } probe;
  ASSERT_EQ(jitlock_rt_handshake(self, &Probe::fn, &probe), JITLOCK_OK);
  EXPECT_EQ(probe.stop, JITLOCK_ESTATE);
  EXPECT_EQ(probe.start, JITLOCK_ESTATE);
  EXPECT_EQ(deflationStats().thread_running, 1u);
  EXPECT_EQ(log.count(), 8u);
  EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
  EXPECT_EQ(deflationStats().thread_running, 0u);

  // Shutdown stops it; with threads attached, shutdown is refused and the
  // thread left running.
  ASSERT_EQ(jitlock_rt_start_deflation(nullptr), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_ESTATE);
  EXPECT_EQ(deflationStats().thread_running, 1u);
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(deflationStats().thread_running, 0u);
  EXPECT_EQ(log.count(), 9u);
  self = jitlock_rt_attach();
  ASSERT_NE(self, nullptr);
}

// With no period, only an inflation that reaches the threshold wakes the
// thread; with no threshold, only the period.
TEST_F(DeflationTest, ThreadDeflatesOnItsThresholdAndOnItsPeriod) {
  for (bool byThreshold : {true, false}) {
    SCOPED_TRACE(byThreshold ? "threshold 8" : "period 5 ms");
    constexpr int kObjs = 8;
    jitlock_deflation_stats s0 = deflationStats();
    jitlock_deflation_policy p =
        byThreshold ? deflationPolicy(0, kObjs) : deflationPolicy(5, 0);
    ASSERT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_OK);
    std::vector<Obj *> objs;
    for (int i = 0; i < kObjs; ++i) {
      objs.push_back(newObj());
      inflateIdle(objs.back());
    }
    // The last inflation wakes the thread while this thread still owns that
    // monitor, so a threshold cycle may find it busy; with a threshold only,
    // nothing sweeps it again until `kObjs` more monitors are alive. The
    // period sweeps it on a later cycle.
    const int mustDeflate = byThreshold ? kObjs - 1 : kObjs;
    {
      // Native: the thread's handshakes do not wait for us.
      NativeScope waiting(self);
      EXPECT_TRUE(waitUntil([&] {
        return deflationStats().monitors_deflated - s0.monitors_deflated >=
               uint64_t(mustDeflate);
      })) << stats().monitors_alive
          << " monitors left";
    }
    ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    jitlock_deflation_stats s1 = deflationStats();
    EXPECT_GE(s1.thread_cycles - s0.thread_cycles, 1u);
    EXPECT_GE(s1.handshakes - s0.handshakes, 1u);
    EXPECT_LE(stats().monitors_alive, uint64_t(kObjs - mustDeflate));
    for (int i = 0; i < mustDeflate; ++i)
      EXPECT_EQ(objs[i]->hdr(), withTableHash(objs[i], kUnlockedHeader));
    jitlock_rt_deflate_idle();
    EXPECT_EQ(stats().monitors_alive, 0u);
  }
  // Below the threshold and with no period, nothing happens.
  jitlock_deflation_policy p = deflationPolicy(0, 1000);
  ASSERT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_OK);
  Obj *o = newObj();
  inflateIdle(o);
  {
    NativeScope waiting(self);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(stats().monitors_alive, 1u);
  ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
}

// A process that exits with the thread running, attached and holding an
// idle monitor, exits cleanly: the thread is stopped before the runtime's
// statics go (a std::thread destroyed while it runs would abort).
TEST(DeflationExitTest, ExitWithTheThreadRunningIsClean) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        static Obj o;
        jitlock_thread *t = jitlock_rt_attach();
        jitlock_rt_monitor_enter(t, &o);
        jitlock_rt_wait_timed(t, &o, 0);
        jitlock_rt_monitor_exit(t, &o);
        jitlock_deflation_policy p = deflationPolicy(1, 1);
        if (jitlock_rt_start_deflation(&p) != JITLOCK_OK)
          std::_Exit(3);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
