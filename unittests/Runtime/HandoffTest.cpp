//===- HandoffTest.cpp - Parking, barging and handoff of inflated monitors ===//
//
// The "Parking and fairness" contract of lib/Runtime/Synchronizer.cpp and
// docs/runtime.md, checked through the C ABI only:
//
//  * progress under barging: a thread that must park on a monitor that three
//    "hog" threads re-acquire as fast as they can still gets through 2000
//    enter/exit pairs (a head that keeps losing is handed the monitor
//    directly), with mutual exclusion checked by a plain counter and an
//    overlap detector, and ownership checked after every acquisition
//    (jitlock_rt_holds_lock, jitlock_rt_owner_of);
//  * FIFO service: with nobody running to barge, parked threads acquire in
//    exactly the order in which they parked, both on a monitor the main
//    thread owns outright and on one a contender inflated anonymously;
//  * wait/notify ping-pong under barging: two threads alternate a turn
//    variable 20000 times (wait until it is my turn, flip it, notify) while a
//    hog hammers enter/exit on the same object; wait never returns without
//    the notify that made it my turn, and restores the recursion depth;
//  * the starvation bound itself, by counting rather than timing: while one
//    thread sits at the head of the entry queue, a barging hog completes at
//    most MaxLossesBeforeHandoff + 1 acquisitions before the head owns the
//    monitor (BargingIsBoundedPerQueuedHead).
//
// Liveness is checked by a 60 s watchdog per phase (polling, never sleeping
// for correctness). A watchdog failure prints jitlock_rt_inspect of the
// object, the statistics and the threads' progress, then aborts: a thread
// stuck inside the runtime cannot be unwound, and shutdown would refuse to
// run with it attached. Nothing here is random, so there is no seed.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

using namespace jitlock_test;

namespace {

/// Liveness limit for each multi-threaded phase.
constexpr std::chrono::seconds kWatchdog{60};

std::string statsText(const jitlock_rt_stats &s) {
  char buf[512];
  snprintf(buf, sizeof buf,
           "{fast_locks=%" PRIu64 " recursive_locks=%" PRIu64
           " monitor_enters=%" PRIu64 " inflations=%" PRIu64
           " contended_enters=%" PRIu64 " parks=%" PRIu64
           " slow_path_calls=%" PRIu64 " waits=%" PRIu64 " notifies=%" PRIu64
           " monitors_alive=%" PRIu64 "}",
           s.fast_locks, s.recursive_locks, s.monitor_enters, s.inflations,
           s.contended_enters, s.parks, s.slow_path_calls, s.waits, s.notifies,
           s.monitors_alive);
  return buf;
}

/// The raw jitlock_rt_inspect snapshot, without gtest assertions (usable
/// from the watchdog path and from worker threads).
std::string inspectText(const void *obj) {
  jitlock_lock_info i{};
  int rc = jitlock_rt_inspect(obj, &i);
  char buf[320];
  snprintf(buf, sizeof buf,
           "jitlock_rt_inspect(%p) rc=%s {state=%s anonymous_owner=%u "
           "owner=%p (id %" PRIu64 ") holds=%" PRIu64 " entry_queued=%" PRIu64
           " waiting=%" PRIu64 "}",
           obj, st(rc), stateName(i.state).c_str(), i.anonymous_owner,
           (void *)i.owner, i.owner ? jitlock_rt_thread_id(i.owner) : 0,
           i.holds, i.entry_queued, i.waiting);
  return buf;
}

size_t deadlockCycles() {
  return jitlock_rt_find_deadlocks(
      [](void *, size_t, jitlock_thread *const *, void *const *) {}, nullptr);
}

/// Reports a liveness failure and aborts the process (see the file comment).
[[noreturn]] void watchdogFired(const char *what, const void *obj,
                                const std::string &progress) {
  std::ostringstream msg;
  msg << "WATCHDOG: " << what << " did not finish within " << kWatchdog.count()
      << " s\n  " << inspectText(obj) << "\n  stats " << statsText(stats())
      << "\n  deadlock cycles reported: " << deadlockCycles()
      << "\n  progress: " << progress;
  ADD_FAILURE() << msg.str();
  fprintf(stderr, "%s\nAborting: threads are stuck in the runtime.\n",
          msg.str().c_str());
  fflush(stdout);
  fflush(stderr);
  std::abort();
}

/// An attached OS thread running one body. Records completion and the
/// detach status; it must end holding nothing.
class Attached {
public:
  explicit Attached(std::function<void(jitlock_thread *)> body)
      : thr_([this, body = std::move(body)] {
          jitlock_thread *t = jitlock_rt_attach();
          self_.store(t, std::memory_order_release);
          if (t)
            body(t);
          finished_.store(true, std::memory_order_release);
          leftOnStack_ = jitlock_rt_lock_stack(t, nullptr, 0);
          detachRc_ = jitlock_rt_detach();
        }) {}
  ~Attached() {
    if (thr_.joinable())
      thr_.join();
  }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  jitlock_thread *thread() const {
    return self_.load(std::memory_order_acquire);
  }
  /// Joins (the body must have finished) and checks the clean detach.
  void joinAndCheck(const char *name) {
    thr_.join();
    EXPECT_NE(self_.load(), nullptr) << name << ": attach failed";
    EXPECT_EQ(leftOnStack_, 0u) << name << " ended with lock-stack entries";
    EXPECT_EQ(detachRc_, JITLOCK_OK) << name << " detach: " << st(detachRc_);
  }

private:
  std::atomic<jitlock_thread *> self_{nullptr};
  std::atomic<bool> finished_{false};
  size_t leftOnStack_ = 0;
  int detachRc_ = -1;
  std::thread thr_;
};

/// A start line: every thread checks in, then all go at once.
struct StartGate {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  void arriveAndWait() {
    ready.fetch_add(1, std::memory_order_acq_rel);
    while (!go.load(std::memory_order_acquire))
      std::this_thread::yield();
  }
  bool open(int n) {
    bool all = waitFor(
        kWatchdog, [&] { return ready.load(std::memory_order_acquire) >= n; });
    go.store(true, std::memory_order_release);
    return all;
  }
};

/// First-failure recorder for checks made on worker threads.
struct Failures {
  std::atomic<uint64_t> count{0};
  std::mutex mu;
  std::string first;
  void add(const std::string &what) {
    if (count.fetch_add(1, std::memory_order_relaxed) == 0) {
      std::lock_guard<std::mutex> g(mu);
      first = what;
    }
  }
  std::string firstText() {
    std::lock_guard<std::mutex> g(mu);
    return first;
  }
};

enum class Inflation { NonAdjacentReentry, Contention };

const char *inflationName(Inflation how) {
  return how == Inflation::NonAdjacentReentry ? "non-adjacent re-entry (A B A)"
                                              : "contention";
}

class HandoffTest : public RuntimeTest {
protected:
  /// Leaves `a` inflated, unowned and with empty queues.
  void inflate(Obj *a, Inflation how) {
    if (how == Inflation::NonAdjacentReentry) {
      Obj *b = newObj();
      ASSERT_EQ(enter(a), JITLOCK_OK);
      ASSERT_EQ(enter(b), JITLOCK_OK);
      ASSERT_EQ(enter(a), JITLOCK_OK); // [A B A]: A must inflate.
      ASSERT_EQ(exit(a), JITLOCK_OK);
      ASSERT_EQ(exit(b), JITLOCK_OK);
      ASSERT_EQ(exit(a), JITLOCK_OK);
    } else {
      ASSERT_EQ(enter(a), JITLOCK_OK);
      ASSERT_EQ(inspect(a).state, JITLOCK_STATE_FAST);
      Worker contender;
      std::atomic<int> rc{-1};
      contender.post([&] {
        int r = jitlock_rt_monitor_enter(contender.thread(), a);
        if (r == JITLOCK_OK)
          r = jitlock_rt_monitor_exit(contender.thread(), a);
        rc = r;
      });
      bool queued = waitEntryQueued(a, 1);
      ASSERT_EQ(exit(a), JITLOCK_OK); // Fixes the anonymous owner, hands over.
      ASSERT_TRUE(queued) << "the contender never queued: " << describe(a);
      ASSERT_TRUE(contender.join()) << describe(a);
      ASSERT_EQ(rc.load(), JITLOCK_OK) << st(rc.load());
    }
    jitlock_lock_info i = inspect(a);
    ASSERT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
    ASSERT_EQ(i.owner, nullptr) << describe(a);
    ASSERT_EQ(i.anonymous_owner, 0u) << describe(a);
    ASSERT_EQ(i.entry_queued, 0u) << describe(a);
    ASSERT_EQ(i.waiting, 0u) << describe(a);
  }

  void expectIdleInflated(Obj *a) {
    jitlock_lock_info i = inspect(a);
    EXPECT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
    EXPECT_EQ(i.owner, nullptr) << describe(a);
    EXPECT_EQ(i.holds, 0u) << describe(a);
    EXPECT_EQ(i.entry_queued, 0u) << describe(a);
    EXPECT_EQ(i.waiting, 0u) << describe(a);
    EXPECT_EQ(jitlock_rt_owner_of(a), nullptr);
  }

  /// spin_limit 0 makes every contended enter park at once instead of
  /// spinning, so the victim is in the entry queue far more often.
  void useSpinLimit(uint32_t spinLimit) {
    jitlock_rt_config cfg;
    jitlock_rt_default_config(&cfg);
    cfg.spin_limit = spinLimit;
    reconfigure(cfg);
  }

  void runBargingVictim(Inflation how, uint32_t spinLimit);
  void runParkingOrder(Inflation how);
  void runPingPong(uint32_t spinLimit);
};

//===----------------------------------------------------------------------===//
// 1 + 3. A parked thread makes progress while hogs barge; ownership is
// consistent after every acquisition.
//===----------------------------------------------------------------------===//

constexpr int kHogs = 3;
constexpr uint64_t kVictimPairs = 2000;
/// Acquisitions each hog makes before the victim starts.
constexpr uint64_t kHogWarmup = 100;

struct alignas(64) HogSlot {
  std::atomic<uint64_t> acquisitions{0}; // written by its hog only
};

void HandoffTest::runBargingVictim(Inflation how, uint32_t spinLimit) {
  ASSERT_NO_FATAL_FAILURE(useSpinLimit(spinLimit));
  Obj *a = newObj();
  ASSERT_NO_FATAL_FAILURE(inflate(a, how));
  jitlock_rt_stats s0 = stats();

  // Everything below the lock is plain memory: only the monitor orders it.
  uint64_t sharedCounter = 0;
  std::atomic<int> inCriticalSection{0};
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> victimDone{0};
  HogSlot hog[kHogs];
  uint64_t victimCount = 0, maxBargesPerVictimEnter = 0, maxBargesAt = 0;
  uint64_t hogsDuringVictim = 0;
  Failures fails;
  StartGate gate;

  auto hogTotal = [&] {
    uint64_t n = 0;
    for (HogSlot &h : hog)
      n += h.acquisitions.load(std::memory_order_relaxed);
    return n;
  };
  auto criticalSection = [&](const char *who) {
    if (inCriticalSection.exchange(1, std::memory_order_relaxed) != 0)
      fails.add(std::string(who) + ": two threads inside the critical section");
    ++sharedCounter;
    inCriticalSection.store(0, std::memory_order_relaxed);
  };

  std::vector<std::unique_ptr<Attached>> threads;
  for (int h = 0; h < kHogs; ++h)
    threads.push_back(std::make_unique<Attached>([&, h](jitlock_thread *t) {
      gate.arriveAndWait();
      uint64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        int rc = jitlock_rt_monitor_enter(t, a);
        if (rc != JITLOCK_OK) {
          fails.add(std::string("hog enter: ") + st(rc));
          break;
        }
        criticalSection("hog");
        ++mine;
        rc = jitlock_rt_monitor_exit(t, a);
        // Relaxed: only an informational reading by the victim.
        hog[h].acquisitions.store(mine, std::memory_order_relaxed);
        if (rc != JITLOCK_OK) {
          fails.add(std::string("hog exit: ") + st(rc));
          break;
        }
      }
    }));
  threads.push_back(std::make_unique<Attached>([&](jitlock_thread *t) {
    gate.arriveAndWait();
    // Start once every hog is cycling, so that the victim meets barging
    // from its first enter (not a correctness wait: the watchdog covers it).
    while (!std::all_of(std::begin(hog), std::end(hog), [](HogSlot &h) {
      return h.acquisitions.load(std::memory_order_relaxed) >= kHogWarmup;
    }))
      std::this_thread::yield();
    uint64_t hogsBefore = hogTotal();
    for (uint64_t i = 0; i < kVictimPairs; ++i) {
      uint64_t before = hogTotal();
      int rc = jitlock_rt_monitor_enter(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("victim enter: ") + st(rc));
        break;
      }
      if (uint64_t barges = hogTotal() - before;
          barges > maxBargesPerVictimEnter) {
        maxBargesPerVictimEnter = barges;
        maxBargesAt = i;
      }
      // 3: the owner is exactly the victim, from both queries. Exact: the
      // victim holds the lock for the whole of both calls.
      if (!jitlock_rt_holds_lock(t, a))
        fails.add("victim acquisition " + std::to_string(i) +
                  ": jitlock_rt_holds_lock(self) is false; " + inspectText(a));
      if (jitlock_thread *o = jitlock_rt_owner_of(a); o != t)
        fails.add("victim acquisition " + std::to_string(i) +
                  ": jitlock_rt_owner_of is " +
                  std::to_string(o ? jitlock_rt_thread_id(o) : 0) +
                  ", not the victim " +
                  std::to_string(jitlock_rt_thread_id(t)) + "; " +
                  inspectText(a));
      criticalSection("victim");
      ++victimCount;
      rc = jitlock_rt_monitor_exit(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("victim exit: ") + st(rc));
        break;
      }
      victimDone.store(i + 1, std::memory_order_relaxed);
    }
    hogsDuringVictim = hogTotal() - hogsBefore;
    stop.store(true, std::memory_order_relaxed);
  }));
  Attached &victim = *threads.back();

  ASSERT_TRUE(gate.open(kHogs + 1)) << "threads did not start";
  if (!waitFor(kWatchdog, [&] { return victim.finished(); }))
    watchdogFired("the victim's 2000 enter/exit pairs", a,
                  "victim completed " + std::to_string(victimDone.load()) +
                      "/" + std::to_string(kVictimPairs) +
                      " pairs; hog acquisitions so far " +
                      std::to_string(hogTotal()) + "; thread-side failures " +
                      std::to_string(fails.count.load()) +
                      " (first: " + fails.firstText() + ")");
  if (!waitFor(kWatchdog, [&] {
        return std::all_of(threads.begin(), threads.end(),
                           [](auto &t) { return t->finished(); });
      }))
    watchdogFired("the hogs, after the stop flag", a,
                  "hog acquisitions " + std::to_string(hogTotal()));
  for (auto &t : threads)
    t->joinAndCheck("barging test thread");

  EXPECT_EQ(fails.count.load(), 0u) << "first: " << fails.firstText();
  uint64_t hogCount = hogTotal();
  EXPECT_EQ(victimCount, kVictimPairs);
  // Mutual exclusion: every increment counted by its thread is in the
  // shared plain counter (ThreadSanitizer also sees a missing edge).
  EXPECT_EQ(sharedCounter, victimCount + hogCount)
      << "victim " << victimCount << " hogs " << hogCount;
  expectIdleInflated(a);

  jitlock_rt_stats s1 = stats();
  printf("[ inflated by %s, spin_limit %u ] hogs: %" PRIu64 " acquisitions (",
         inflationName(how), spinLimit, hogCount);
  for (int h = 0; h < kHogs; ++h)
    printf("%s%" PRIu64, h ? " " : "", hog[h].acquisitions.load());
  printf("), %" PRIu64 " while the victim ran = %.1f per victim "
         "acquisition; at most %" PRIu64
         " hog acquisitions during one victim enter (its #%" PRIu64
         "; counts any time the victim was descheduled, too)\n",
         hogsDuringVictim, double(hogsDuringVictim) / double(kVictimPairs),
         maxBargesPerVictimEnter, maxBargesAt);
  printf("  stats delta: contended_enters=%" PRIu64 " parks=%" PRIu64
         " monitor_enters=%" PRIu64 " inflations=%" PRIu64 "\n",
         s1.contended_enters - s0.contended_enters, s1.parks - s0.parks,
         s1.monitor_enters - s0.monitor_enters, s1.inflations - s0.inflations);
  fflush(stdout);
  EXPECT_EQ(s1.inflations, s0.inflations) << "the object was inflated already";
}

TEST_F(HandoffTest, ParkedVictimProgressesUnderBarging_InflatedByReentry) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  runBargingVictim(Inflation::NonAdjacentReentry, cfg.spin_limit);
}

TEST_F(HandoffTest, ParkedVictimProgressesUnderBarging_InflatedByContention) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  runBargingVictim(Inflation::Contention, cfg.spin_limit);
}

TEST_F(HandoffTest, ParkedVictimProgressesUnderBarging_NoSpinning) {
  runBargingVictim(Inflation::NonAdjacentReentry, 0);
}

//===----------------------------------------------------------------------===//
// 2. With nobody barging, parked threads are served in parking order.
//===----------------------------------------------------------------------===//

constexpr int kParkers = 4;
constexpr int kOrderRounds = 10;

void HandoffTest::runParkingOrder(Inflation how) {
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kParkers; ++i)
    workers.push_back(std::make_unique<Worker>());

  for (int round = 0; round < kOrderRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Obj *a = newObj();
    if (how == Inflation::NonAdjacentReentry) {
      ASSERT_NO_FATAL_FAILURE(inflate(a, how));
      ASSERT_EQ(enter(a), JITLOCK_OK);
      ASSERT_EQ(inspect(a).owner, self) << describe(a);
    } else {
      // Held fast-locked; the first parker inflates it anonymously.
      ASSERT_EQ(enter(a), JITLOCK_OK);
      ASSERT_EQ(inspect(a).state, JITLOCK_STATE_FAST) << describe(a);
    }
    // Whatever happens below, the main thread's hold must not outlive the
    // round, or the workers could never finish.
    struct Release {
      HandoffTest *t;
      Obj *a;
      ~Release() {
        if (jitlock_rt_holds_lock(t->self, a))
          EXPECT_EQ(t->exit(a), JITLOCK_OK);
      }
    } release{this, a};

    std::atomic<int> sequence{0};
    int order[kParkers];
    int rcs[kParkers];
    for (int i = 0; i < kParkers; ++i) {
      order[i] = -1;
      rcs[i] = -1;
    }
    for (int i = 0; i < kParkers; ++i) {
      ASSERT_EQ(inspect(a).entry_queued, uint64_t(i)) << describe(a);
      Worker &w = *workers[i];
      w.post([&, i] {
        int rc = jitlock_rt_monitor_enter(w.thread(), a);
        if (rc == JITLOCK_OK) {
          order[i] = sequence.fetch_add(1, std::memory_order_relaxed);
          rc = jitlock_rt_monitor_exit(w.thread(), a);
        }
        rcs[i] = rc;
      });
      ASSERT_TRUE(waitEntryQueued(a, uint64_t(i) + 1))
          << "parker " << i << " never queued: " << describe(a);
    }
    jitlock_lock_info i = inspect(a);
    ASSERT_EQ(i.state, JITLOCK_STATE_INFLATED) << describe(a);
    ASSERT_EQ(i.entry_queued, uint64_t(kParkers)) << describe(a);
    // For the anonymous monitor, inspect finds the owner on main's stack.
    ASSERT_EQ(i.owner, self) << describe(a);
    ASSERT_EQ(i.anonymous_owner, how == Inflation::Contention ? 1u : 0u)
        << describe(a);
    ASSERT_EQ(sequence.load(), 0) << "a parker got in while main held it";

    ASSERT_EQ(exit(a), JITLOCK_OK);
    for (int k = 0; k < kParkers; ++k)
      if (!workers[k]->join())
        watchdogFired("a parked thread's enter/exit", a,
                      "parker " + std::to_string(k) + " not finished; " +
                          std::to_string(sequence.load()) + " acquired");
    std::string orderText;
    for (int k = 0; k < kParkers; ++k)
      orderText += (k ? " " : "") + std::to_string(order[k]);
    for (int k = 0; k < kParkers; ++k) {
      EXPECT_EQ(rcs[k], JITLOCK_OK) << "parker " << k << ": " << st(rcs[k]);
      EXPECT_EQ(order[k], k)
          << "parker " << k << " (parking position " << k
          << ") acquired at position " << order[k]
          << "; acquisition positions by parking order: " << orderText;
    }
    expectIdleInflated(a);
  }
}

TEST_F(HandoffTest, ParkedThreadsAcquireInParkingOrder_OwnedMonitor) {
  runParkingOrder(Inflation::NonAdjacentReentry);
}

TEST_F(HandoffTest, ParkedThreadsAcquireInParkingOrder_AnonymousMonitor) {
  runParkingOrder(Inflation::Contention);
}

//===----------------------------------------------------------------------===//
// 4. wait/notify ping-pong with a hog barging on the same object.
//===----------------------------------------------------------------------===//

constexpr uint64_t kPingPongRounds = 20000; // turn flips, both sides together

void HandoffTest::runPingPong(uint32_t spinLimit) {
  ASSERT_NO_FATAL_FAILURE(useSpinLimit(spinLimit));
  Obj *a = newObj();
  ASSERT_NO_FATAL_FAILURE(inflate(a, Inflation::NonAdjacentReentry));
  jitlock_rt_stats s0 = stats();

  // Guarded by a's monitor.
  int turn = 0;
  uint64_t flips = 0, hogCount = 0;
  uint64_t playerFlips[2] = {0, 0};
  uint64_t playerWaits[2] = {0, 0};
  // Mirrors for the watchdog's report only.
  std::atomic<uint64_t> flipsSeen{0}, hogSeen{0};
  std::atomic<bool> stop{false};
  Failures fails;
  StartGate gate;

  auto player = [&](int me) {
    return [&, me](jitlock_thread *t) {
      gate.arriveAndWait();
      for (;;) {
        // Held twice: wait must give back the recursion depth too.
        int rc = jitlock_rt_monitor_enter(t, a);
        if (rc == JITLOCK_OK)
          rc = jitlock_rt_monitor_enter(t, a);
        if (rc != JITLOCK_OK) {
          fails.add(std::string("player enter: ") + st(rc));
          break;
        }
        while (turn != me && flips < kPingPongRounds) {
          rc = jitlock_rt_wait(t, a);
          ++playerWaits[me];
          if (rc != JITLOCK_OK) {
            fails.add(std::string("player wait: ") + st(rc));
            break;
          }
          jitlock_lock_info i{};
          jitlock_rt_inspect(a, &i);
          if (i.owner != t || i.holds != 2)
            fails.add("after wait the player is not the owner with 2 holds: " +
                      inspectText(a));
          // Every notify follows the flip that made it this player's turn,
          // in the same critical section, and only the other player
          // notifies: a wait that returns OK otherwise was spurious.
          if (turn != me)
            fails.add("wait returned JITLOCK_OK but it is not my turn "
                      "(spurious return) at flip " +
                      std::to_string(flips));
        }
        bool finished = flips >= kPingPongRounds || rc != JITLOCK_OK;
        if (!finished) {
          turn = 1 - me;
          ++flips;
          ++playerFlips[me];
          flipsSeen.store(flips, std::memory_order_relaxed);
          rc = jitlock_rt_notify(t, a);
          if (rc != JITLOCK_OK)
            fails.add(std::string("player notify: ") + st(rc));
        }
        int rc1 = jitlock_rt_monitor_exit(t, a);
        int rc2 = jitlock_rt_monitor_exit(t, a);
        if (rc1 != JITLOCK_OK || rc2 != JITLOCK_OK) {
          fails.add(std::string("player exit: ") + st(rc1) + " " + st(rc2));
          break;
        }
        if (finished)
          break;
      }
    };
  };

  std::vector<std::unique_ptr<Attached>> players;
  players.push_back(std::make_unique<Attached>(player(0)));
  players.push_back(std::make_unique<Attached>(player(1)));
  Attached hog([&](jitlock_thread *t) {
    gate.arriveAndWait();
    while (!stop.load(std::memory_order_relaxed)) {
      int rc = jitlock_rt_monitor_enter(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("hog enter: ") + st(rc));
        break;
      }
      hogSeen.store(++hogCount, std::memory_order_relaxed);
      rc = jitlock_rt_monitor_exit(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("hog exit: ") + st(rc));
        break;
      }
    }
  });

  ASSERT_TRUE(gate.open(3)) << "threads did not start";
  if (!waitFor(kWatchdog, [&] {
        return players[0]->finished() && players[1]->finished();
      }))
    watchdogFired(
        "the wait/notify ping-pong", a,
        std::to_string(flipsSeen.load()) + "/" +
            std::to_string(kPingPongRounds) + " flips; hog acquisitions " +
            std::to_string(hogSeen.load()) + "; thread-side failures " +
            std::to_string(fails.count.load()) +
            " (first: " + fails.firstText() + ")");
  stop.store(true, std::memory_order_relaxed);
  if (!waitFor(kWatchdog, [&] { return hog.finished(); }))
    watchdogFired("the hog, after the stop flag", a,
                  "hog acquisitions " + std::to_string(hogSeen.load()));
  players[0]->joinAndCheck("player 0");
  players[1]->joinAndCheck("player 1");
  hog.joinAndCheck("hog");

  EXPECT_EQ(fails.count.load(), 0u) << "first: " << fails.firstText();
  EXPECT_EQ(flips, kPingPongRounds);
  EXPECT_EQ(playerFlips[0], kPingPongRounds / 2);
  EXPECT_EQ(playerFlips[1], kPingPongRounds / 2);
  EXPECT_EQ(turn, int(kPingPongRounds % 2));
  expectIdleInflated(a);

  jitlock_rt_stats s1 = stats();
  printf("ping-pong (spin_limit %u): %" PRIu64 " flips, waits %" PRIu64
         "+%" PRIu64 ", hog acquisitions %" PRIu64
         " (%.1f per flip); stats delta: "
         "waits=%" PRIu64 " notifies=%" PRIu64 " parks=%" PRIu64 "\n",
         spinLimit, flips, playerWaits[0], playerWaits[1], hogCount,
         double(hogCount) / double(kPingPongRounds), s1.waits - s0.waits,
         s1.notifies - s0.notifies, s1.parks - s0.parks);
  fflush(stdout);
}

TEST_F(HandoffTest, WaitNotifyPingPongUnderBarging) {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  runPingPong(cfg.spin_limit);
}

TEST_F(HandoffTest, WaitNotifyPingPongUnderBarging_NoSpinning) {
  runPingPong(0);
}

//===----------------------------------------------------------------------===//
// 5. Barging past a queued head is bounded, counted in acquisitions.
//===----------------------------------------------------------------------===//

/// Mirrors MaxLossesBeforeHandoff in lib/Runtime/Synchronizer.cpp (the
/// runtime does not export it).
constexpr uint64_t kMaxLossesBeforeHandoff = 16;

/// How many hog acquisitions can complete while the victim is the entry
/// queue's head, derived from releaseMonitor() and waitInEntryQueue() with
/// exactly two threads locking (the hog H and the victim V):
///
///  * While V is queued the owner word carries the queued bit, so every H
///    exit fails N3 and runs releaseMonitor() under the queue lock, with V as
///    EntryHead. H never queues meanwhile: it queues only when the holder is
///    someone else, and V holds nothing while queued. So V is the only node.
///  * Each such exit finds V's Wakeup either Sleep or Compete. Compete
///    counts a loss (Losses += 1) at the exit. Sleep counts none and sets
///    Compete. Only V sets Wakeup back to Sleep, and only after a lost
///    tryTakeFree, which counts a loss too. Hence between two exits that find
///    Sleep lies at least one loss by V, and
///        exits <= 1 + (losses counted before the last exit).
///  * Once a loss brings Losses to MaxLossesBeforeHandoff, HandoffWanted is
///    set and that same exit (loss at an exit) or the next exit (loss by V,
///    who then sleeps until woken) grants V the monitor. No exit without a
///    grant happens after that, so at most MaxLossesBeforeHandoff losses are
///    ever counted, and V owns the monitor after at most
///    MaxLossesBeforeHandoff + 1 exits by H. Reached exactly: one exit finds
///    Sleep, then 16 barging H acquisitions each exit while V is still
///    waking up (Compete); the 16th of those grants.
///  * The observer reads C0 only after inspect showed V queued (and H not
///    inside enter), V reads C1 inside its critical section. Every increment
///    in between happened inside an H critical section that started after V
///    had queued or was running when V queued, and whose exit came before V
///    owned the monitor: it is one of those exits. Reading C0 late only
///    lowers C1 - C0.
///
/// So C1 - C0 <= MaxLossesBeforeHandoff + 1 on a correct runtime, whatever
/// the scheduler does. With handoff disabled (an unbounded loss limit) V
/// must win a race against a hog that re-acquires in a tight loop while V is
/// still waking from the futex, and the count exceeds the bound routinely.
constexpr int64_t kMaxBargesPerQueuedHead = kMaxLossesBeforeHandoff + 1;
/// The victim's rounds: at least this many, and on until enough of them were
/// observed with the victim queued.
constexpr uint64_t kBoundedMinRounds = 200;
constexpr uint64_t kBoundedMinCountedRounds = 50;

TEST_F(HandoffTest, BargingIsBoundedPerQueuedHead) {
  // spin_limit 0: a victim that finds the monitor taken queues at once.
  ASSERT_NO_FATAL_FAILURE(useSpinLimit(0));
  Obj *a = newObj();
  ASSERT_NO_FATAL_FAILURE(inflate(a, Inflation::NonAdjacentReentry));

  // All sequentially consistent: the observer's reasoning ("C0 was read after
  // inspect saw the victim queued, while the hog was not inside enter")
  // orders loads of different variables.
  std::atomic<uint64_t> hogAcquisitions{0}; // incremented inside the CS
  std::atomic<uint64_t> hogEnterSeq{0};     // odd while the hog is in enter
  std::atomic<uint64_t> announced{0};       // victim: about to enter round r
  std::atomic<uint64_t> victimSeq{0};       // victim: owns it in round r
  std::atomic<uint64_t> victimC1{0};        // C1 of the last round
  std::atomic<uint64_t> finishedRound{0};   // victim: exited round r
  std::atomic<uint64_t> observedRound{0};   // observer: done with round r
  std::atomic<bool> stop{false};
  Failures fails;
  StartGate gate;

  Attached hog([&](jitlock_thread *t) {
    gate.arriveAndWait();
    while (!stop.load()) {
      hogEnterSeq.fetch_add(1); // odd: possibly queued from here on
      int rc = jitlock_rt_monitor_enter(t, a);
      hogEnterSeq.fetch_add(1); // even: not queued any more
      if (rc != JITLOCK_OK) {
        fails.add(std::string("hog enter: ") + st(rc));
        break;
      }
      hogAcquisitions.fetch_add(1);
      rc = jitlock_rt_monitor_exit(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("hog exit: ") + st(rc));
        break;
      }
    }
  });
  Attached victim([&](jitlock_thread *t) {
    gate.arriveAndWait();
    // Start once the hog is cycling (the watchdog covers a hog that is not).
    while (hogAcquisitions.load() < kHogWarmup && !stop.load())
      std::this_thread::yield();
    for (uint64_t r = 1; !stop.load(); ++r) {
      announced.store(r);
      int rc = jitlock_rt_monitor_enter(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("victim enter: ") + st(rc));
        break;
      }
      victimSeq.store(r);
      victimC1.store(hogAcquisitions.load());
      rc = jitlock_rt_monitor_exit(t, a);
      if (rc != JITLOCK_OK) {
        fails.add(std::string("victim exit: ") + st(rc));
        break;
      }
      finishedRound.store(r);
      // Nothing lock-related: let the observer close the round, then a
      // short pause so that the hog has the monitor to itself again.
      while (observedRound.load() < r && !stop.load())
        std::this_thread::yield();
      for (volatile int i = 0; i < 1000; i = i + 1) {
      }
    }
  });

  // The observer (this thread).
  ASSERT_TRUE(gate.open(2)) << "threads did not start";
  const auto deadline = std::chrono::steady_clock::now() + kWatchdog;
  uint64_t rounds = 0, counted = 0, violations = 0;
  int64_t maxDiff = INT64_MIN, minDiff = INT64_MAX;
  uint64_t maxDiffRound = 0;
  std::map<int64_t, uint64_t> histogram; // C1 - C0 -> rounds
  std::string firstViolations;
  auto progress = [&] {
    return "round " + std::to_string(rounds + 1) + ", " +
           std::to_string(counted) + " counted, " + std::to_string(violations) +
           " over the bound; victim announced " +
           std::to_string(announced.load()) + " acquired " +
           std::to_string(victimSeq.load()) + " finished " +
           std::to_string(finishedRound.load()) + "; hog acquisitions " +
           std::to_string(hogAcquisitions.load()) + ", hog enter seq " +
           std::to_string(hogEnterSeq.load()) + "; thread-side failures " +
           std::to_string(fails.count.load()) +
           " (first: " + fails.firstText() + ")";
  };
  auto checkDeadline = [&](const char *what) {
    if (std::chrono::steady_clock::now() > deadline)
      watchdogFired(what, a, progress());
  };
  auto victimGone = [&] { return victim.finished() || hog.finished(); };

  for (uint64_t r = 1;
       rounds < kBoundedMinRounds || counted < kBoundedMinCountedRounds; ++r) {
    for (unsigned spins = 0; announced.load() < r && !victimGone(); ++spins) {
      checkDeadline("waiting for the victim to start a round");
      if (spins % 64 == 63)
        std::this_thread::yield();
    }
    // Look for the victim in the entry queue until it owns the monitor.
    bool seenQueued = false;
    uint64_t c0 = 0;
    for (unsigned spins = 0; victimSeq.load() < r && !victimGone(); ++spins) {
      uint64_t s0 = hogEnterSeq.load();
      jitlock_lock_info info{};
      int rc = jitlock_rt_inspect(a, &info);
      uint64_t s1 = hogEnterSeq.load();
      // The hog was outside enter for the whole inspect, so it was not
      // queued, and nobody but the victim ever locks `a`.
      if (rc == JITLOCK_OK && info.entry_queued >= 1 && s0 % 2 == 0 &&
          s0 == s1) {
        c0 = hogAcquisitions.load();
        seenQueued = victimSeq.load() < r; // not a later, unrelated episode
        break;
      }
      checkDeadline("looking for the victim in the entry queue");
      if (spins % 64 == 63)
        std::this_thread::yield();
    }
    for (unsigned spins = 0; finishedRound.load() < r && !victimGone();
         ++spins) {
      checkDeadline("waiting for the victim to finish a round");
      if (spins % 64 == 63)
        std::this_thread::yield();
    }
    if (victimGone())
      break;
    uint64_t c1 = victimC1.load();
    ++rounds;
    if (seenQueued) {
      ++counted;
      int64_t diff = int64_t(c1) - int64_t(c0);
      ++histogram[diff];
      if (diff > maxDiff) {
        maxDiff = diff;
        maxDiffRound = r;
      }
      minDiff = std::min(minDiff, diff);
      if (diff > kMaxBargesPerQueuedHead && ++violations <= 5)
        firstViolations += "\n  round " + std::to_string(r) + ": C0 " +
                           std::to_string(c0) + " C1 " + std::to_string(c1) +
                           " -> " + std::to_string(diff) + " hog acquisitions";
    }
    observedRound.store(r);
  }
  stop.store(true);
  if (!waitFor(kWatchdog, [&] { return victim.finished() && hog.finished(); }))
    watchdogFired("the hog and victim, after the stop flag", a, progress());
  hog.joinAndCheck("hog");
  victim.joinAndCheck("victim");

  EXPECT_EQ(fails.count.load(), 0u) << "first: " << fails.firstText();
  expectIdleInflated(a);

  std::string distribution;
  for (auto &[diff, n] : histogram)
    distribution += " " + std::to_string(diff) + ":" + std::to_string(n);
  printf("barging per queued head: %" PRIu64 " rounds, %" PRIu64
         " counted (victim seen queued), hog acquisitions %" PRIu64
         "; C1 - C0 max %" PRId64 " (round %" PRIu64 "), min %" PRId64
         ", bound %" PRId64 "\n  distribution (C1-C0:rounds):%s\n",
         rounds, counted, hogAcquisitions.load(),
         counted ? maxDiff : int64_t(0), maxDiffRound,
         counted ? minDiff : int64_t(0), kMaxBargesPerQueuedHead,
         distribution.c_str());
  fflush(stdout);

  EXPECT_GE(counted, kBoundedMinCountedRounds)
      << "too few rounds saw the victim queued: " << progress();
  EXPECT_EQ(violations, 0u)
      << violations << " of " << counted << " counted rounds let the hog "
      << "acquire the monitor more than " << kMaxBargesPerQueuedHead
      << " times (MaxLossesBeforeHandoff + 1) while the victim was queued; "
      << "max " << maxDiff << " in round " << maxDiffRound
      << "; first:" << firstViolations;
}

} // namespace
