//===- DeflateForSpaceTest.cpp - Index storage's deflation for space -----===//
//
// Index storage has room for monitor_capacity monitors. An inflation that
// finds none free runs a deflation cycle (or waits for the one in flight)
// and tries again; JITLOCK_ENOMEM means every monitor is in use even after
// that (Monitor.cpp, "Free monitors"; Deflation.cpp). Checked, whatever
// JITLOCK_TEST_MONITORS says (these tests always use index storage), in
// heavy mode, where every enter of an object without a monitor inflates:
//
//  * threads that each hold at most one monitor at a time, cycling through
//    four times the capacity in objects of their own, run many cycles for
//    space at once and never get JITLOCK_ENOMEM: not with 2 to 4 threads,
//    capacities from 64 to 1024, the deflation thread running or not, nor
//    when they acquire through jitlock_rt_restore_locks (which reserves
//    monitors up front) instead of monitor enter;
//  * a region whose monitors are all held is ENOMEM, at once and without a
//    hang, for enter and restore-locks, also while other threads cycle;
//  * the holder of a safepoint that needs space while another cycle has
//    swept and waits for its handshake (which the safepoint holds up) frees
//    what that cycle swept, instead of failing or waiting for it.
//
// Seeds come from JITLOCK_SPACE_SEED, else the clock, and are printed.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include "Monitor.h"

#include <barrier>
#include <cinttypes>
#include <cstdio>
#include <random>

using namespace jitlock_test;

namespace {

class DeflateForSpaceTest : public RuntimeTest {
protected:
  /// Heavy mode, index storage of `capacity` monitors, misuse logged: the
  /// runtime is shut down first, since the capacity changes.
  void configureIndex(uint32_t capacity) {
    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
    cfg.monitor_storage = JITLOCK_MONITORS_INDEX;
    cfg.monitor_capacity = capacity;
    cfg.misuse_handler = &MisuseLog::handler;
    cfg.misuse_ctx = &log;
    ASSERT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    self = jitlock_rt_attach();
    ASSERT_NE(self, nullptr);
    jitlock_rt_get_layout(&layout);
  }

  /// How a churning thread takes its object.
  enum class Take { Enter, RestoreLocks };

  struct Round {
    unsigned threads;
    uint32_t capacity;
    bool deflationThread;
    Take take;
  };

  /// Runs one round of churn: `r.threads` threads, 4 * capacity objects
  /// split among them, each thread taking (and releasing) its objects in a
  /// random order, the same over and over (`takes` in all, at least 16
  /// passes), so that most takes find
  /// the object's monitor deflated and inflate it again. Returns the
  /// failures seen.
  uint64_t churn(const Round &r, uint64_t seed, unsigned takes) {
    configureIndex(r.capacity);
    const unsigned perThread = 4 * r.capacity / r.threads;
    const unsigned passes = std::max(16u, takes / perThread);
    std::vector<std::vector<Obj *>> own(r.threads);
    for (auto &v : own)
      for (unsigned i = 0; i < perThread; ++i)
        v.push_back(newObj());
    if (r.deflationThread) {
      jitlock_deflation_policy p = deflationPolicy(1, r.capacity / 2);
      EXPECT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_OK);
    }
    const jitlock_deflation_stats d0 = deflationStats();
    const uint64_t inflations0 = stats().inflations;
    std::atomic<uint64_t> failures{0}, wrongMonitor{0};
    // All at once: a thread alone would cycle through a quarter of the
    // objects, which fits the region.
    std::barrier start(r.threads);
    std::vector<std::thread> threads;
    {
      NativeScope idle(self);
      for (unsigned ti = 0; ti < r.threads; ++ti)
        threads.emplace_back([&, ti] {
          jitlock_thread *t = jitlock_rt_attach();
          if (!t) {
            failures.fetch_add(1);
            return;
          }
          {
            NativeScope waiting(t);
            start.arrive_and_wait();
          }
          std::mt19937_64 rng(seed + ti);
          std::vector<Obj *> order = own[ti];
          std::shuffle(order.begin(), order.end(), rng);
          for (unsigned pass = 0; pass < passes; ++pass) {
            for (Obj *o : order) {
              pollAsCompiledCode(t, layout);
              int rc;
              if (r.take == Take::Enter) {
                rc = jitlock_rt_monitor_enter(t, o);
              } else {
                jitlock_relock_entry e{o, JITLOCK_RELOCK_ELIDED};
                rc = jitlock_rt_restore_locks(t, &e, 1, 0);
              }
              if (rc != JITLOCK_OK) {
                failures.fetch_add(1);
                continue;
              }
              // Heavy mode: the hold is a monitor of o's, owned by t.
              if ((o->hdr() & kLockMask) != kMonitor ||
                  jitlock_rt_owner_of(o) != t)
                wrongMonitor.fetch_add(1);
              ++o->payload;
              if (jitlock_rt_monitor_exit(t, o) != JITLOCK_OK)
                failures.fetch_add(1);
            }
          }
          if (jitlock_rt_detach() != JITLOCK_OK)
            failures.fetch_add(1);
        });
      for (std::thread &th : threads)
        th.join();
    }
    if (r.deflationThread)
      EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    const jitlock_deflation_stats d1 = deflationStats();
    EXPECT_EQ(wrongMonitor.load(), 0u) << "seed " << seed;
    uint64_t payload = 0;
    for (auto &v : own)
      for (Obj *o : v)
        payload += o->payload;
    EXPECT_EQ(payload + failures.load(),
              uint64_t(r.threads) * perThread * passes);
    // The region held a quarter of the objects: cycles made the room.
    const uint64_t inflations = stats().inflations - inflations0;
    EXPECT_GE(inflations, uint64_t(r.threads) * perThread);
    EXPECT_GE(d1.monitors_deflated - d0.monitors_deflated,
              inflations - r.capacity);
    return failures.load();
  }

  MisuseLog log;
  jitlock_rt_layout layout{};
};

const char *takeName(int take) { return take ? "restore-locks" : "enter"; }

// Threads holding one monitor each, four times the capacity in objects:
// whatever cycles for space are in flight, an inflation finds a monitor.
TEST_F(DeflateForSpaceTest, IdleMonitorsAreNeverOutOfSpace) {
  const uint64_t seed =
      seedFromEnv("DeflateForSpaceTest.IdleMonitors", "JITLOCK_SPACE_SEED");
  const unsigned takes = kSanitized ? 2000 : 20000;
  std::vector<Round> rounds;
  for (Take take : {Take::Enter, Take::RestoreLocks})
    for (bool deflationThread : {false, true}) {
      for (unsigned threads : {4u, 3u, 2u})
        rounds.push_back({threads, 64, deflationThread, take});
      rounds.push_back({4, 256, deflationThread, take});
      if (!kSanitized)
        rounds.push_back({4, 1024, deflationThread, take});
    }
  Watchdog dog(std::chrono::seconds(120), "rounds",
               [&](const std::string &phase) {
                 std::fprintf(stderr,
                              "DeflateForSpaceTest.IdleMonitors stuck in %s, "
                              "seed %" PRIu64 "\n",
                              phase.c_str(), seed);
               });
  for (size_t i = 0; i < rounds.size(); ++i) {
    const Round &r = rounds[i];
    char name[128];
    std::snprintf(name, sizeof(name),
                  "round %zu: %u threads, capacity %u, %s, deflation "
                  "thread %s",
                  i, r.threads, r.capacity, takeName(int(r.take)),
                  r.deflationThread ? "on" : "off");
    dog.phase(name);
    size_t logged = log.count();
    uint64_t failures = churn(r, seed + i * 1000, takes);
    EXPECT_EQ(failures, 0u) << name << ", seed " << seed;
    EXPECT_EQ(log.count(), logged)
        << name << ": " << log.last().what << " (" << st(log.last().status)
        << "), seed " << seed;
    if (HasFailure())
      break;
  }
}

// Every monitor held: enter and restore-locks get JITLOCK_ENOMEM at once,
// with or without a deflation thread, while other threads cycle through
// objects of their own (and so run cycles for space); once one is released
// the next inflation finds it.
TEST_F(DeflateForSpaceTest, AFullRegionIsOutOfSpace) {
  constexpr uint32_t kCapacity = 64;
  Watchdog dog(std::chrono::seconds(60), "full region",
               [](const std::string &phase) {
                 std::fprintf(stderr,
                              "DeflateForSpaceTest.AFullRegion stuck "
                              "in %s\n",
                              phase.c_str());
               });
  for (bool deflationThread : {false, true}) {
    configureIndex(kCapacity);
    if (deflationThread) {
      jitlock_deflation_policy p = deflationPolicy(1, 1);
      ASSERT_EQ(jitlock_rt_start_deflation(&p), JITLOCK_OK);
    }
    std::vector<Obj *> held;
    for (uint32_t i = 0; i < kCapacity; ++i) {
      held.push_back(newObj());
      ASSERT_EQ(enter(held.back()), JITLOCK_OK) << i;
    }
    Obj *extra = newObj();
    size_t logged = log.count();
    EXPECT_EQ(enter(extra), JITLOCK_ENOMEM);
    jitlock_relock_entry e{extra, JITLOCK_RELOCK_ELIDED};
    EXPECT_EQ(jitlock_rt_restore_locks(self, &e, 1, 0), JITLOCK_ENOMEM);
    EXPECT_EQ(log.count(), logged + 2);
    EXPECT_EQ(extra->hdr(), kUnlockedHeader);
    // Another thread asks for space meanwhile, many times: it gets
    // ENOMEM too, and neither of the two waits for the other for good.
    std::atomic<uint64_t> outOfSpace{0};
    std::thread other([&] {
      jitlock_thread *t = jitlock_rt_attach();
      Obj o;
      for (int i = 0; i < 200; ++i)
        outOfSpace += jitlock_rt_monitor_enter(t, &o) == JITLOCK_ENOMEM;
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
    for (int i = 0; i < 200; ++i)
      EXPECT_EQ(enter(extra), JITLOCK_ENOMEM);
    {
      NativeScope joining(self);
      other.join();
    }
    EXPECT_EQ(outOfSpace.load(), 200u);
    ASSERT_EQ(exit(held.back()), JITLOCK_OK);
    held.pop_back();
    ASSERT_EQ(enter(extra), JITLOCK_OK) << "a released monitor is found";
    ASSERT_EQ(exit(extra), JITLOCK_OK);
    for (Obj *o : held)
      ASSERT_EQ(exit(o), JITLOCK_OK);
    if (deflationThread)
      ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    log.clear();
  }
}

// A cycle outside a safepoint (an unattached thread's deflate_idle) has
// swept the whole region and is stopped by a test hook before its
// handshake; the main thread then takes a safepoint, which holds that
// handshake up. Inside it, a restore-locks on behalf of a stopped thread
// needs monitors: the safepoint's cycle for space frees what the stopped
// cycle swept, every other thread being stopped or safe. Waiting for that
// cycle would hang (the watchdog ends it); ignoring its monitors would be
// ENOMEM.
TEST_F(DeflateForSpaceTest, ASafepointFreesWhatTheCycleInFlightSwept) {
  constexpr uint32_t kCapacity = 16;
  configureIndex(kCapacity);
  Watchdog dog(std::chrono::seconds(60), "cycle in flight",
               [](const std::string &phase) {
                 std::fprintf(stderr,
                              "DeflateForSpaceTest.ASafepointFrees stuck in "
                              "%s\n",
                              phase.c_str());
               });
  std::vector<Obj *> idle;
  for (uint32_t i = 0; i < kCapacity; ++i) {
    idle.push_back(newObj());
    ASSERT_EQ(enter(idle.back()), JITLOCK_OK);
    ASSERT_EQ(exit(idle.back()), JITLOCK_OK);
  }
  Obj *elided = newObj();
  Worker stopped;
  static std::atomic<int> stage;
  stage = 0;
  // 1: the cycle swept; 2: it may go on to its handshake.
  jitlock::CycleSweptTestHook.store([] {
    stage = 1;
    for (int i = 0; i < 60000 && stage.load() != 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  std::atomic<size_t> deflated{0};
  std::thread cycle([&] { deflated = jitlock_rt_deflate_idle(); });
  {
    NativeScope native(self);
    while (stage.load() != 1)
      std::this_thread::yield();
    ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    stage = 2; // it now waits for the operation lock
    jitlock_relock_entry e{elided, JITLOCK_RELOCK_ELIDED};
    EXPECT_EQ(jitlock_rt_restore_locks(stopped.thread(), &e, 1, 0), JITLOCK_OK)
        << "the cycle in flight swept the whole region";
    EXPECT_EQ(jitlock_rt_owner_of(elided), stopped.thread());
    ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    cycle.join();
  }
  jitlock::CycleSweptTestHook.store(nullptr);
  EXPECT_EQ(deflated.load(), kCapacity);
  EXPECT_EQ(log.count(), 0u) << log.last().what;
  stopped.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(stopped.thread(), elided), JITLOCK_OK);
  });
  for (Obj *o : idle)
    EXPECT_EQ(o->hdr(), kUnlockedHeader);
}

} // namespace
