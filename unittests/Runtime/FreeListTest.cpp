//===- FreeListTest.cpp - Per-thread free monitors and the registry -------===//
//
// Monitor allocation (Monitor.cpp, "Free monitors"): each attached thread
// pops free monitors from its own list without a lock and refills it a batch
// at a time; registration is a lock-free push. Checked, under the storage of
// JITLOCK_TEST_MONITORS (CTest runs the suite once per storage; index runs
// with a small capacity):
//
//  * many threads inflating and deflating concurrently, a deflation thread
//    running, never share a monitor: each thread checks, while it holds an
//    inflated object, that the monitor the header names is that object's and
//    its own, before and after yielding;
//  * monitors_alive is exact: at quiescent points it equals the number of
//    inflated objects;
//  * index storage fails an inflation with JITLOCK_ENOMEM only when every
//    monitor of the region is in use, although other threads' lists held
//    the free ones;
//  * detach gives the thread's list back: what it held is reused, not
//    allocated again;
//  * allocation takes the registry lock for far fewer than one inflation in
//    two (the internal counters of FreeListFigures).
//
// Seeds come from JITLOCK_FREELIST_SEED, else the clock, and are printed.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include "Monitor.h"
#include "Synchronizer.h"

#include <barrier>
#include <cinttypes>
#include <cstdio>
#include <random>

using namespace jitlock_test;

namespace {

constexpr unsigned kThreads = 8;
/// Index storage's capacity in these tests: a few batches per thread.
constexpr uint32_t kIndexCapacity = 256;

class FreeListTest : public RuntimeTest {
protected:
  // Heavy mode, so that every enter of an object without a monitor
  // inflates it; index storage with a small capacity.
  void SetUp() override {
    RuntimeTest::SetUp();
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
    cfg.misuse_handler = &MisuseLog::handler;
    cfg.misuse_ctx = &log;
    if (testMonitorStorage() == JITLOCK_MONITORS_INDEX)
      cfg.monitor_capacity = kIndexCapacity;
    reconfigure(cfg);
    jitlock_rt_get_layout(&layout);
  }

  static bool isIndex() {
    return testMonitorStorage() == JITLOCK_MONITORS_INDEX;
  }

  // Whether the object `o`, held by `t`, names a monitor that is `o`'s and
  // owned by `t`; `m` gets it.
  static bool ownsItsMonitor(jitlock_thread *t, Obj *o, jitlock::Monitor *&m) {
    uint64_t h = o->hdr();
    if ((h & kLockMask) != kMonitor)
      return false;
    m = jitlock::monitorNamedBy(o, h);
    return m && m->object() == o && m->isOwnedBy(*t);
  }

  static uint64_t monitorsInMemory() {
    jitlock_deflation_stats d{};
    jitlock_rt_get_deflation_stats(&d);
    return d.monitors_allocated;
  }

  static size_t inflatedCount(const std::vector<Obj *> &objs) {
    size_t n = 0;
    for (Obj *o : objs)
      n += (o->hdr() & kLockMask) == kMonitor;
    return n;
  }

  MisuseLog log;
  jitlock_rt_layout layout{};
};

//===-- Many threads, a deflation thread ---------------------------------===//

// Each thread churns its own objects (every enter inflates one whose
// monitor was deflated) and a few shared ones (contention), polls, and now
// and then deflates itself; the deflation thread deflates on a small
// threshold and every millisecond. A monitor handed to two threads at once
// shows up as a held object whose monitor names another object or owner.
TEST_F(FreeListTest, ConcurrentChurnNeverSharesAMonitor) {
  const uint64_t seed =
      seedFromEnv("FreeListTest.ConcurrentChurn", "JITLOCK_FREELIST_SEED");
  // Index: the threads' objects and the shared ones fit the region with
  // room to spare for the monitors a cycle deflated and has not freed yet,
  // so no inflation may fail, however the free monitors are spread.
  constexpr unsigned kOwn = 15, kShared = 8;
  static_assert(kThreads * kOwn + kShared <= kIndexCapacity / 2);
  const unsigned iters = 20000;
  std::vector<Obj *> shared, all;
  for (unsigned i = 0; i < kShared; ++i)
    all.push_back(shared.emplace_back(newObj()));
  std::vector<std::vector<Obj *>> own(kThreads);
  for (auto &v : own)
    for (unsigned i = 0; i < kOwn; ++i)
      all.push_back(v.emplace_back(newObj()));
  const jitlock::FreeListFigures f0 = jitlock::freeListFigures();
  const jitlock_rt_stats s0 = stats();
  jitlock_deflation_policy p = deflationPolicy(1, 16);
  ASSERT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_OK);

  std::atomic<uint64_t> violations{0}, failures{0};
  // A monitor handed out twice may also corrupt the registry for good:
  // report what was seen instead of hanging.
  Watchdog dog(std::chrono::seconds(120), "churn", [&](const std::string &) {
    std::fprintf(stderr,
                 "FreeListTest.ConcurrentChurn stuck: %" PRIu64
                 " monitors seen shared, %" PRIu64 " failures, seed %" PRIu64
                 "\n",
                 violations.load(), failures.load(), seed);
  });
  std::vector<std::thread> threads;
  {
    NativeScope idle(self);
    for (unsigned ti = 0; ti < kThreads; ++ti)
      threads.emplace_back([&, ti] {
        jitlock_thread *t = jitlock_rt_attach();
        if (!t) {
          failures.fetch_add(1);
          return;
        }
        std::mt19937_64 rng(seed + ti);
        for (unsigned i = 0; i < iters; ++i) {
          pollAsCompiledCode(t, layout);
          Obj *o =
              rng() % 8 == 0 ? shared[rng() % kShared] : own[ti][rng() % kOwn];
          if (jitlock_rt_monitor_enter(t, o) != JITLOCK_OK) {
            failures.fetch_add(1);
            continue;
          }
          jitlock::Monitor *m = nullptr, *again = nullptr;
          if (!ownsItsMonitor(t, o, m))
            violations.fetch_add(1);
          ++o->payload;
          std::this_thread::yield();
          if (!ownsItsMonitor(t, o, again) || again != m)
            violations.fetch_add(1);
          if (jitlock_rt_monitor_exit(t, o) != JITLOCK_OK)
            failures.fetch_add(1);
          if (rng() % 512 == 0)
            jitlock_rt_deflate_idle();
        }
        if (jitlock_rt_detach() != JITLOCK_OK)
          failures.fetch_add(1);
      });
    for (std::thread &th : threads)
      th.join();
  }
  ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
  const jitlock_rt_stats s1 = stats();
  const jitlock::FreeListFigures f1 = jitlock::freeListFigures();
  const uint64_t inflations = s1.inflations - s0.inflations;
  const uint64_t locked = f1.LockedAllocations - f0.LockedAllocations;
  std::printf("  %" PRIu64 " inflations, %" PRIu64 " refills, %" PRIu64
              " locked allocations, %" PRIu64 " steals, %" PRIu64
              " monitors alive\n",
              inflations, f1.Refills - f0.Refills, locked,
              f1.Steals - f0.Steals, stats().monitors_alive);
  EXPECT_EQ(violations.load(), 0u) << "a monitor was shared; seed " << seed;
  EXPECT_EQ(failures.load(), 0u) << "seed " << seed;
  EXPECT_EQ(log.count(), 0u) << log.last().what;
  uint64_t payload = 0;
  for (Obj *o : all)
    payload += o->payload;
  EXPECT_EQ(payload, uint64_t(kThreads) * iters);
  // Every thread detached, nothing held: alive is what is still inflated.
  EXPECT_EQ(stats().monitors_alive, inflatedCount(all));
  EXPECT_GT(inflations, uint64_t(kThreads) * kOwn);
  EXPECT_LT(locked * 2, inflations)
      << "most inflations must take no lock; seed " << seed;
  jitlock_rt_deflate_idle();
  EXPECT_EQ(stats().monitors_alive, 0u);
  EXPECT_EQ(inflatedCount(all), 0u);
}

//===-- Index: a full region ---------------------------------------------===//

// After churn has left free monitors in every thread's list, the threads
// together hold the whole region: every inflation succeeds, since a thread
// that finds the region full takes the others' free monitors. One more
// fails with JITLOCK_ENOMEM (no monitor is free anywhere, even after the
// deflation cycle), and succeeds once one is released.
TEST_F(FreeListTest, IndexFailsOnlyWhenEveryMonitorIsInUse) {
  if (!isIndex())
    GTEST_SKIP() << "only index storage has a capacity";
  const uint64_t seed =
      seedFromEnv("FreeListTest.IndexFull", "JITLOCK_FREELIST_SEED");
  const uint64_t steals0 = jitlock::freeListFigures().Steals;
  constexpr unsigned kHeld = kIndexCapacity / kThreads;
  std::vector<std::vector<Obj *>> held(kThreads);
  for (auto &v : held)
    for (unsigned i = 0; i < kHeld; ++i)
      v.push_back(newObj());
  Obj *extra = newObj();
  std::atomic<uint64_t> failures{0};
  // Phases, between barriers: churn; the main thread deflates everything
  // (so that no inflation below needs a deflation cycle); hold; the main
  // thread checks; release.
  std::barrier sync(kThreads + 1);
  std::vector<std::thread> threads;
  {
    NativeScope idle(self);
    for (unsigned ti = 0; ti < kThreads; ++ti)
      threads.emplace_back([&, ti] {
        jitlock_thread *t = jitlock_rt_attach();
        std::mt19937_64 rng(seed + ti);
        // Churn: inflate a random few and deflate, leaving this thread's
        // list partly full.
        for (unsigned round = 0; round < 20; ++round) {
          unsigned n = 1 + rng() % kHeld;
          for (unsigned i = 0; i < n; ++i)
            if (jitlock_rt_monitor_enter(t, held[ti][i]) != JITLOCK_OK)
              failures.fetch_add(1);
          for (unsigned i = n; i-- > 0;)
            if (jitlock_rt_monitor_exit(t, held[ti][i]) != JITLOCK_OK)
              failures.fetch_add(1);
          if (rng() % 2)
            jitlock_rt_deflate_idle();
          pollAsCompiledCode(t, layout);
        }
        {
          NativeScope wait(t);
          sync.arrive_and_wait(); // churned
          sync.arrive_and_wait(); // every monitor free
        }
        for (Obj *o : held[ti])
          if (jitlock_rt_monitor_enter(t, o) != JITLOCK_OK)
            failures.fetch_add(1);
        {
          NativeScope wait(t);
          sync.arrive_and_wait(); // everyone holds
          sync.arrive_and_wait(); // the main thread checked
        }
        for (Obj *o : held[ti])
          if (jitlock_rt_monitor_exit(t, o) != JITLOCK_OK)
            failures.fetch_add(1);
        if (jitlock_rt_detach() != JITLOCK_OK)
          failures.fetch_add(1);
      });
    sync.arrive_and_wait();
  }
  jitlock_rt_deflate_idle();
  EXPECT_EQ(stats().monitors_alive, 0u);
  {
    NativeScope idle(self);
    sync.arrive_and_wait();
    sync.arrive_and_wait();
  }
  EXPECT_EQ(failures.load(), 0u) << "seed " << seed;
  EXPECT_EQ(log.count(), 0u) << log.last().what;
  EXPECT_EQ(stats().monitors_alive, kIndexCapacity);
  std::printf("  %" PRIu64 " thread lists emptied for a full region\n",
              jitlock::freeListFigures().Steals - steals0);
  size_t n0 = log.count();
  EXPECT_EQ(enter(extra), JITLOCK_ENOMEM) << "the region is full";
  EXPECT_EQ(log.count(), n0 + 1);
  EXPECT_EQ(extra->hdr(), kUnlockedHeader);
  {
    NativeScope idle(self);
    sync.arrive_and_wait();
    for (std::thread &th : threads)
      th.join();
  }
  EXPECT_EQ(failures.load(), 0u) << "seed " << seed;
  EXPECT_EQ(stats().monitors_alive, kIndexCapacity)
      << "released, not yet deflated";
  // The inflation deflates for space, and finds one.
  ASSERT_EQ(enter(extra), JITLOCK_OK);
  ASSERT_EQ(exit(extra), JITLOCK_OK);
  EXPECT_EQ(stats().monitors_alive, 1u);
}

//===-- Detach ------------------------------------------------------------===//

// A thread that inflated and deflated keeps free monitors in its list;
// detach gives them back, so that another thread reuses them instead of
// allocating more.
TEST_F(FreeListTest, DetachGivesTheListBack) {
  Obj *o = newObj();
  Worker w;
  {
    // The worker's deflation handshakes with this thread too.
    NativeScope idle(self);
    w.call([&] {
      ASSERT_EQ(jitlock_rt_monitor_enter(w.thread(), o), JITLOCK_OK);
      ASSERT_EQ(jitlock_rt_monitor_exit(w.thread(), o), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_deflate_idle(), 1u);
    });
  }
  const uint64_t inMemory = monitorsInMemory();
  EXPECT_GE(inMemory, 1u);
  w.stop();
  // As many inflations as the worker's list held, all at once.
  std::vector<Obj *> objs;
  for (uint64_t i = 0; i < inMemory; ++i) {
    objs.push_back(newObj());
    ASSERT_EQ(enter(objs.back()), JITLOCK_OK);
  }
  EXPECT_EQ(monitorsInMemory(), inMemory)
      << "the detached thread's free monitors were not reused";
  for (Obj *x : objs)
    ASSERT_EQ(exit(x), JITLOCK_OK);
  EXPECT_EQ(jitlock_rt_deflate_idle(), inMemory);
}

} // namespace
