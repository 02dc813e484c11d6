//===- StepWindowTest.cpp - One forced window per protocol step -----------===//
//
// Each test opens, through the runtime's test hooks, the window that one step
// of the protocol (Synchronizer.cpp) closes, and checks the invariant that
// the step keeps: with the step removed the test fails, every time. These
// are the steps that random stress reaches too rarely to notice their loss;
// scripts/mutate.sh removes each one in turn and expects these tests to fail
// (docs/robustness.md, "The mutation check").
//
// Inline code is played by hand here where the window is inline: a header
// load, a monitor found by the layout's rules, a CAS or a store of the owner
// word, exactly as the LLVM lowering and the emitters do them (M1, N2, N3).
// A test that finds the lock broken lets the stranded thread go, so that it
// fails instead of hanging.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include "ExitBarrier.h"
#include "MonitorStorage.h"
#include "Synchronizer.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

using namespace jitlock_test;

namespace {

using DeflaterHook = HookScope<jitlock::DeflationStage, jitlock::Monitor &>;
using JoinHook = HookScope<jitlock::JoinStage, jitlock::Monitor &>;
using HashHook = HookScope<jitlock::IdentityHashStage, void *>;

/// How long a thread that the step under test should have woken may take
/// before the test calls it stranded.
constexpr std::chrono::seconds kStranded{5};

/// Installs jitlock::JoinBarrierTestHook for the scope.
class JoinBarrierHook {
public:
  explicit JoinBarrierHook(std::function<void()> F) {
    current() = std::move(F);
    jitlock::JoinBarrierTestHook.store(&run);
  }
  ~JoinBarrierHook() {
    jitlock::JoinBarrierTestHook.store(nullptr);
    current() = nullptr;
  }
  JoinBarrierHook(const JoinBarrierHook &) = delete;
  JoinBarrierHook &operator=(const JoinBarrierHook &) = delete;

private:
  static std::function<void()> &current() {
    static std::function<void()> F;
    return F;
  }
  static void run() { current()(); }
};

class StepWindowTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    layout_.struct_size = sizeof(layout_);
    ASSERT_EQ(jitlock_rt_fill_layout(&layout_), JITLOCK_OK);
  }

  /// The defaults with the storage under test, no spin (a contended enter
  /// queues at once) and the inflated exit `exitKind`; false when the
  /// kernel cannot give that exit its barrier (the defaults are back then).
  bool configure(uint32_t exitKind = JITLOCK_EXIT_AUTO) {
    jitlock_rt_config cfg;
    testDefaultConfig(&cfg);
    cfg.spin_limit = 0;
    cfg.inflated_exit = exitKind;
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    int rc = jitlock_rt_configure(&cfg);
    if (rc != JITLOCK_OK) {
      testDefaultConfig(&cfg);
      EXPECT_EQ(jitlock_rt_configure(&cfg), JITLOCK_OK);
    }
    self = jitlock_rt_attach();
    EXPECT_NE(self, nullptr);
    jitlock_rt_fill_layout(&layout_);
    return rc == JITLOCK_OK && self;
  }

  /// Inflates `o` (a timed wait needs a monitor) and leaves it held by the
  /// main thread, once, or free.
  void inflate(Obj *o, bool keepHeld) {
    ASSERT_EQ(enter(o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(self, o, 0), JITLOCK_ETIMEDOUT);
    if (!keepHeld)
      ASSERT_EQ(exit(o), JITLOCK_OK);
    ASSERT_EQ(o->lowBits(), kMonitor) << describe(o);
  }

  /// The monitor `o`'s header names, as the runtime finds it.
  static char *monitorOf(const Obj *o) {
    uint64_t h = o->hdr();
    if ((h & kLockMask) != kMonitor)
      return nullptr;
    return reinterpret_cast<char *>(jitlock::storage::monitorFor(o, h));
  }
  std::atomic<uintptr_t> &ownerWord(char *m) const {
    return *reinterpret_cast<std::atomic<uintptr_t> *>(
        m + layout_.monitor_owner_offset);
  }
  std::atomic<uint32_t> &entryCount(char *m) const {
    return *reinterpret_cast<std::atomic<uint32_t> *>(
        m + layout_.monitor_entry_count_offset);
  }
  static bool parked(const jitlock_thread *t) {
    return jitlock_rt_thread_state(t) == JITLOCK_THREAD_BLOCKED;
  }
  bool pollArmed(const jitlock_thread *t) const {
    auto *word = reinterpret_cast<const std::atomic<uint64_t> *>(
        reinterpret_cast<const char *>(t) + layout_.poll_word_offset);
    return word->load(std::memory_order_relaxed) & layout_.poll_armed_bit;
  }

  /// Waits for `w`'s enter of `o`, posted with its status in `rc`, which
  /// the step under test should have let through; if it stays stranded,
  /// fails with `why` and lets it through with an enter and exit of ours
  /// (whose exit finds it counted). `w` owns `o` then; it gives it back.
  void expectEntered(Worker &w, Obj *o, std::atomic<int> &rc,
                     const std::string &why) {
    bool entered = waitFor(kStranded, [&] { return rc.load() == JITLOCK_OK; });
    EXPECT_TRUE(entered) << why << ": " << describe(o);
    if (!entered) {
      ASSERT_EQ(enter(o), JITLOCK_OK);
      ASSERT_EQ(exit(o), JITLOCK_OK);
    }
    ASSERT_TRUE(w.join()) << describe(o);
    EXPECT_EQ(rc.load(), JITLOCK_OK);
    EXPECT_EQ(inspect(o).owner, w.thread());
    w.call(
        [&] { EXPECT_EQ(jitlock_rt_monitor_exit(w.thread(), o), JITLOCK_OK); });
  }

  jitlock_rt_layout layout_{};
};

//===----------------------------------------------------------------------===//
// J2: the joiner's barrier
//===----------------------------------------------------------------------===//

// The owner's inline exit (N2, N3) under the store exit, as a core with a
// store buffer may run it: the load of the entry count is performed, and sees
// nobody, while the release store of 0 still waits in the buffer. A thread
// joins the queue meanwhile. What J2 guarantees is that the store is visible
// once the joiner's barrier has run (membarrier runs a full fence on the
// exiter's core); the hook at the end of the barrier drains the buffer to
// model that. With J2, the joiner's re-check (J3) sees the monitor free and
// takes it. Without it, J3 sees the owner, the joiner sleeps, and the exit,
// which saw no count, wakes nobody: a lost wake-up. (The fence exit cannot
// load before its store is visible, so it has no such window.)
TEST_F(StepWindowTest, JoinBarrierMakesABufferedReleaseVisibleToTheRecheck) {
  if (!configure(JITLOCK_EXIT_STORE))
    GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is not "
                    "available here: the store exit cannot be configured";
  Obj *o = newObj();
  inflate(o, /*keepHeld=*/true);
  char *m = monitorOf(o);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(ownerWord(m).load(), uintptr_t(self));

  // N3, reordered: the count is loaded first, the store is buffered.
  ASSERT_EQ(entryCount(m).load(std::memory_order_relaxed), 0u);
  std::atomic<bool> buffered{true};
  auto drain = [&] {
    if (buffered.exchange(false))
      ownerWord(m).store(0, std::memory_order_release);
  };
  JoinBarrierHook hook(drain);
  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), o); });
  // Through (J2 drained the store and J3 saw it), or asleep with the store
  // still buffered.
  ASSERT_TRUE(waitUntil([&] {
    return rc.load() != -1 || (buffered.load() && parked(w.thread()));
  })) << describe(o);
  // The buffer drains in the end anyway; the exit saw no count, so it calls
  // nobody.
  drain();
  expectEntered(w, o, rc,
                "lost wake-up: the joiner's re-check (J3) did not see the "
                "release that its barrier (J2) should have made visible, and "
                "it sleeps on a free monitor");
}

//===----------------------------------------------------------------------===//
// The deflater's XQ after an abort
//===----------------------------------------------------------------------===//

// A deflater passes A1's check of the entry count while nobody is queued.
// Then a thread queues behind the owner, and the owner's inline exit
// releases (N3) and finds it counted; before the exit's XQ runs, the
// deflater's A1 CAS marks the free monitor. The XQ finds the marker and
// leaves the queue to the deflater, whose A2 sees the count and aborts. Only
// the abort's XQ can wake the queued thread now.
TEST_F(StepWindowTest, AbortedDeflationWakesTheQueueAnExitLeftToIt) {
  ASSERT_TRUE(configure());
  Obj *o = newObj();
  inflate(o, /*keepHeld=*/true);
  char *m = monitorOf(o);
  ASSERT_NE(m, nullptr);

  std::atomic<int> at{0}, go{0}; // the deflater's stage, and how far it may go
  DeflaterHook hook(jitlock::DeflationTestHook,
                    [&](jitlock::DeflationStage stage, jitlock::Monitor &mon) {
                      if (reinterpret_cast<char *>(&mon) != m)
                        return;
                      int s = stage == jitlock::DeflationStage::Checked ? 1
                              : stage == jitlock::DeflationStage::OwnerMarked
                                  ? 2
                                  : 0;
                      if (!s || at.load() >= s)
                        return;
                      at = s;
                      while (go.load() < s)
                        std::this_thread::yield();
                    });
  size_t deflated = ~size_t(0);
  std::thread deflater([&] { deflated = jitlock_rt_deflate_idle(); });
  ASSERT_TRUE(waitUntil([&] { return at.load() == 1; }))
      << "the deflater never passed A1's check of the entry count";

  Worker w;
  std::atomic<int> rc{-1};
  w.post([&] { rc = jitlock_rt_monitor_enter(w.thread(), o); });
  ASSERT_TRUE(waitUntil([&] {
    return inspect(o).entry_queued == 1 && parked(w.thread());
  })) << describe(o);

  // N3 inline: release, then the count, which is nonzero: XQ is due.
  ownerWord(m).store(0, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ASSERT_EQ(entryCount(m).load(std::memory_order_relaxed), 1u);
  go = 1;
  ASSERT_TRUE(waitUntil([&] { return at.load() == 2; }))
      << "the deflater did not mark the free monitor (A1): " << describe(o);
  // The exit's XQ, late: it finds the marker and leaves.
  EXPECT_EQ(jitlock_rt_monitor_exit_queued_slow(self, o), JITLOCK_OK);
  go = 2;
  deflater.join();
  EXPECT_EQ(deflated, 0u) << "a monitor with a queued thread was deflated";
  expectEntered(w, o, rc,
                "lost wake-up: the deflater aborted (A2 saw the queued "
                "thread) but did not run the XQ that the exit left to it");
}

//===----------------------------------------------------------------------===//
// A6: the handshake before reuse
//===----------------------------------------------------------------------===//

// Inline M1 on thread W stops between its header load and its owner CAS,
// holding monitor m. A deflater D deflates m, and its next inflation, of
// another object, would reuse m. The handshake (A6) waits for W, which
// cannot poll inside M1, so m stays deflated (owner DEFLATER) until W's CAS
// has failed and W has entered through the runtime. Without the handshake,
// W's CAS lands on m as the other object's free monitor: W then holds that
// object, not its own.
TEST_F(StepWindowTest, HandshakeKeepsAMonitorFromReuseUntilInlineEnterEnds) {
  ASSERT_TRUE(configure());
  Obj *o = newObj();
  inflate(o, /*keepHeld=*/false);
  char *m = monitorOf(o);
  ASSERT_NE(m, nullptr);

  Worker w, d; // the inline enterer, and the deflater
  jitlock_thread *wt = w.thread();
  std::atomic<int> wStage{0}; // 1: header loaded; 2: go on to the CAS
  std::atomic<bool> inlineTook{false}, holdsOwn{false};
  std::atomic<char *> found{nullptr};
  std::atomic<Obj *> other{nullptr}; // the object that m went to
  w.post([&] {
    // A runtime call on o first, as earlier code would have made: under
    // table storage it fills W's monitor cache, which inline code probes.
    ASSERT_EQ(jitlock_rt_monitor_enter(wt, o), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(wt, o), JITLOCK_OK);
    // M1 (E1, E3 first): header, monitor, and then nothing that polls.
    uint64_t h = o->header.load(std::memory_order_relaxed);
    char *wm = (h & kLockMask) == kMonitor ? inlineMonitor(layout_, wt, o, h)
                                           : nullptr;
    found = wm;
    wStage = 1;
    while (wStage.load() != 2)
      std::this_thread::yield();
    uintptr_t free = 0;
    if (wm && ownerWord(wm).compare_exchange_strong(
                  free, uintptr_t(wt), std::memory_order_acquire,
                  std::memory_order_relaxed)) {
      inlineTook = true;
    } else {
      EXPECT_EQ(jitlock_rt_monitor_enter_slow(wt, o), JITLOCK_OK);
    }
    holdsOwn = jitlock_rt_holds_lock(wt, o) == 1;
    // Back in the runtime's reach: the handshake may run now.
    pollAsCompiledCode(wt, layout_);
    if (inlineTook) {
      // N3 inline, over what the CAS took.
      ownerWord(wm).store(0, std::memory_order_release);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if (entryCount(wm).load(std::memory_order_relaxed))
        jitlock_rt_monitor_exit_queued_slow(wt, other.load());
    } else {
      EXPECT_EQ(jitlock_rt_monitor_exit(wt, o), JITLOCK_OK);
    }
  });
  ASSERT_TRUE(waitUntil([&] { return wStage.load() == 1; }));
  ASSERT_EQ(found.load(), m) << "inline code did not find o's monitor";

  size_t deflated = 0;
  std::vector<Obj *> candidates;
  for (int i = 0; i < 64; ++i)
    candidates.push_back(newObj());
  d.post([&] {
    jitlock_thread *dt = d.thread();
    deflated = jitlock_rt_deflate_idle();
    // Inflations until one reuses m (the thread that ran the cycle keeps
    // what it freed, so its first one does).
    for (Obj *c : candidates) {
      EXPECT_EQ(jitlock_rt_monitor_enter(dt, c), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_wait_timed(dt, c, 0), JITLOCK_ETIMEDOUT);
      EXPECT_EQ(jitlock_rt_monitor_exit(dt, c), JITLOCK_OK);
      if (monitorOf(c) == m) {
        other = c;
        break;
      }
    }
  });
  {
    // Safe meanwhile, so that only W holds the handshake up.
    NativeScope native(self);
    // D is done (it did not wait for W), or waits for W's handshake.
    ASSERT_TRUE(waitUntil([&] { return d.finished() || pollArmed(wt); }));
    wStage = 2;
    ASSERT_TRUE(w.join());
    ASSERT_TRUE(d.join());
  }
  EXPECT_EQ(deflated, 1u);
  ASSERT_NE(other.load(), nullptr)
      << "the interleaving did not happen: no other object got m";
  EXPECT_FALSE(inlineTook.load())
      << "inline M1's CAS took m after m was deflated and reused for another "
         "object: the deflater freed it before its handshake reached the "
         "thread (A6)";
  EXPECT_TRUE(holdsOwn.load()) << "W's enter did not give it its own object";
  EXPECT_EQ(inspect(o).owner, nullptr) << describe(o);
  EXPECT_EQ(inspect(other.load()).owner, nullptr) << describe(other.load());
}

//===----------------------------------------------------------------------===//
// A5: the seal of the displaced header
//===----------------------------------------------------------------------===//

// A deflater is inside A5: it has read (and sealed) m's displaced header and
// not yet written it back to the object. An identity hash, from a thread no
// handshake covers, reads the header (still naming m) and m's displaced
// header. Sealed, that word makes the hash wait for the restored header and
// install the hash there. Unsealed, the hash's CAS into m succeeds and its
// checks pass (the header still names m): it returns a hash that the
// restore then overwrites, and the object's next hash differs.
TEST_F(StepWindowTest, SealMakesAHashDuringTheRestoreStartOver) {
  if (testMonitorStorage() == JITLOCK_MONITORS_TABLE)
    GTEST_SKIP() << "table storage keeps the hash in the header: a hash "
                    "reads no monitor";
  Obj *o = newObj();
  inflate(o, /*keepHeld=*/false);
  char *m = monitorOf(o);
  ASSERT_NE(m, nullptr);

  std::atomic<bool> inA5{false}, release{false}, hashed{false};
  std::atomic<int> displacedReads{0};
  DeflaterHook deflaterHook(
      jitlock::DeflationTestHook,
      [&](jitlock::DeflationStage stage, jitlock::Monitor &mon) {
        if (stage != jitlock::DeflationStage::Sealed ||
            reinterpret_cast<char *>(&mon) != m || inA5.exchange(true))
          return;
        while (!release.load())
          std::this_thread::yield();
      });
  HashHook hashHook(jitlock::IdentityHashTestHook,
                    [&](jitlock::IdentityHashStage stage, void *obj) {
                      if (obj == o &&
                          stage == jitlock::IdentityHashStage::DisplacedLoaded)
                        ++displacedReads;
                    });
  size_t deflated = 0;
  std::thread deflater([&] { deflated = jitlock_rt_deflate_idle(); });
  ASSERT_TRUE(waitUntil([&] { return inA5.load(); }))
      << "the deflater never reached A5";
  uint64_t hash = 0;
  std::thread hasher([&] {
    hash = jitlock_rt_identity_hash(nullptr, o);
    hashed = true;
  });
  // Returned (it installed into m), or read m's word again (it waits for
  // the restored header).
  EXPECT_TRUE(
      waitUntil([&] { return hashed.load() || displacedReads.load() >= 2; }));
  release = true;
  {
    NativeScope native(self); // the deflater's handshake
    deflater.join();
    hasher.join();
  }
  EXPECT_EQ(deflated, 1u);
  ASSERT_NE(hash, 0u);
  EXPECT_EQ(jitlock_rt_peek_hash(o), hash)
      << "the hash returned during the restore was lost: A5 wrote back the "
         "displaced header it had read before the hash went into it";
  EXPECT_EQ(jitlock_rt_identity_hash(self, o), hash);
  EXPECT_EQ(o->hdr(), kUnlockedHeader | ((hash << kHashShift) & kHashMask));
}

//===----------------------------------------------------------------------===//
// XQ's direct handoff
//===----------------------------------------------------------------------===//

/// MaxLossesBeforeHandoff in Synchronizer.cpp.
constexpr uint64_t kMaxLossesBeforeHandoff = 16;
/// How many barging acquisitions the main thread makes at most while the
/// victim is queued: far beyond the bound.
constexpr uint64_t kMaxBarges = 10 * kMaxLossesBeforeHandoff;

// A parked victim against a barging thread that always wins: each time an
// exit wakes the victim to compete, the hook holds it until the barger has
// taken the monitor again, and the barger exits again only once the victim
// lost and went back to sleep. Every wake-up is a loss, so only XQ's handoff
// (the head made the owner before it wakes) lets the victim in; it must come
// after MaxLossesBeforeHandoff losses, counted in barging acquisitions.
TEST_F(StepWindowTest, HandoffBoundsTheBargesAQueuedHeadSees) {
  ASSERT_TRUE(configure());
  Obj *o = newObj();
  inflate(o, /*keepHeld=*/true);

  Worker victim;
  jitlock_thread *vt = victim.thread();
  std::atomic<bool> stopBarging{false};
  std::atomic<uint64_t> barges{0}, woken{0};
  std::atomic<uint64_t> bargesBeforeVictim{~uint64_t(0)};
  JoinHook hook(
      jitlock::JoinTestHook, [&](jitlock::JoinStage stage, jitlock::Monitor &) {
        if (stage != jitlock::JoinStage::Woken || jitlock_rt_current() != vt)
          return;
        // Compete only once the barger owns the monitor again.
        while (!stopBarging.load() && jitlock_rt_owner_of(o) != self)
          std::this_thread::yield();
        ++woken;
      });
  std::atomic<int> rc{-1};
  victim.post([&] {
    int r = jitlock_rt_monitor_enter(vt, o);
    bargesBeforeVictim = barges.load();
    EXPECT_EQ(jitlock_rt_monitor_exit(vt, o), JITLOCK_OK);
    rc = r;
  });
  ASSERT_TRUE(waitUntil([&] {
    return inspect(o).entry_queued == 1 && parked(vt);
  })) << describe(o);

  for (uint64_t i = 1; i <= kMaxBarges && !victim.finished(); ++i) {
    ASSERT_EQ(exit(o), JITLOCK_OK);  // XQ: wakes the victim, or hands over
    ASSERT_EQ(enter(o), JITLOCK_OK); // barges in (or queues behind it)
    barges = i;
    // The victim lost this wake-up and sleeps again, or it got the monitor.
    ASSERT_TRUE(waitUntil([&] {
      return victim.finished() || (woken.load() >= i && parked(vt));
    })) << "round "
        << i << ": " << describe(o);
  }
  stopBarging = true;
  ASSERT_EQ(exit(o), JITLOCK_OK);
  ASSERT_TRUE(victim.join()) << describe(o);
  EXPECT_EQ(rc.load(), JITLOCK_OK);
  std::printf("the victim got the monitor after %llu barging acquisitions\n",
              (unsigned long long)bargesBeforeVictim.load());
  EXPECT_LE(bargesBeforeVictim.load(), kMaxLossesBeforeHandoff + 1)
      << "the queued victim lost every wake-up: no exit handed it the "
         "monitor after MaxLossesBeforeHandoff losses (XQ's handoff)";
  EXPECT_EQ(inspect(o).owner, nullptr) << describe(o);
}

} // namespace
