//===- RegressionTest.cpp - Regression tests for fixed runtime bugs -------===//
//
// One test per bug found in review (reproducers in the review notes), each
// asserting the fixed behaviour:
//
//   ThreadExitReleasesMonitorPublishedByContender        exitguard_dbg
//   DetachRefusesWhileOwningMonitorPublishedByContender  unreg, unreg2
//   RestoreRollbackSurvivesEmbedderState                 restore11
//   DeadlockThroughNotifiedWaiterIsReported              dl_notified
//   DeadlockCallbackMayQueryTheRuntime                   dl_cb
//   OwnerOfFindsOwnerThatShiftsItsLockStack              query_miss
//
// Tests that can hang on a broken runtime (a thread parked forever, a real
// deadlock) run in a forked child that reports through its exit status and
// is bounded by alarm(); the others run under an in-process watchdog that
// aborts with diagnostics. Races that cannot be forced are run for a bounded
// number of rounds (and a time budget); the round counts are printed.
// Nothing is random, so there is no seed.
//
// The two "published before registered" tests used to force the old bug's
// schedule by holding the monitor registry lock from a
// jitlock_rt_enumerate_roots callback while a contender inflated an object.
// enumerate_roots now runs at a safepoint, which waits until every other
// thread is safe, so no callback can hold a runtime lock while lock code
// runs. They now run the bug's scenario for a bounded number of rounds and
// check the same behaviour, without forcing the window. Nothing in them
// takes a safepoint, so their threads may spin or wait in `managed`.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"
#include "Watchdog.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

using namespace jitlock_test;

namespace {

using Clock = std::chrono::steady_clock;

//===-- Helpers ----------------------------------------------------------===//

using RegressionChildTest = QuietProcessTest;

class RegressionTest : public RuntimeTest {};

/// Aborts the process with diagnostics, `progress()` among them, if the loop
/// `what` runs longer than `limit`: a thread stuck inside the runtime cannot
/// be unwound, and shutdown would refuse to run with it attached.
class LoopWatchdog : public Watchdog {
public:
  LoopWatchdog(const char *what, std::chrono::seconds limit,
               std::function<std::string()> progress)
      : Watchdog(limit, what, [limit, progress](const std::string &loop) {
          std::string p = progress();
          ADD_FAILURE() << "WATCHDOG: " << loop << " did not finish within "
                        << limit.count() << " s; " << p;
          fprintf(stderr,
                  "WATCHDOG: %s did not finish within %lld s; %s\n"
                  "Aborting: threads are stuck in the runtime.\n",
                  loop.c_str(), (long long)limit.count(), p.c_str());
          fflush(stdout);
          fflush(stderr);
        }) {}
};

//===-- A monitor published before it is registered ----------------------===//
//
// Bug (exitguard_dbg, unreg, unreg2): inflateAnonymous published the monitor
// in the header before registering it. The fast-lock owner could fix the
// owner to itself in between (re-entry) and then detach, or exit its OS
// thread, with a registry scan that missed the monitor: detach succeeded
// while holding the lock, or the exit guard released nothing, and the
// contender parked forever on a monitor owned by a thread that was gone.

enum : int {
  kChildOk = 0,
  kChildSetup = 10,           // a precondition of the scenario failed
  kChildDetachSucceeded = 11, // detach returned OK while holding x
  kChildExitNotReported = 12, // the exit guard saw no held lock
  kChildContenderParked = 13, // the contender never got the lock
  kChildStillOwned = 14,      // an object is owned after everything ended
  kChildWrongMisuse = 15,     // unexpected misuse reports
  kChildNoBlock = 16,
  kChildWrongCount = 17,
  kChildWrongCycle = 18,
  kChildCallbackHung = 19,
  kChildWrongAnswer = 20,
  kChildUnexpectedReturn = 21,
};

/// How a thread that fixed a monitor's owner to itself stops being attached.
enum class Leave { Detach, ExitThread };

/// Misuse reports, kept by the child (static: the child _exit()s).
MisuseLog &childMisuses() {
  static MisuseLog log;
  return log;
}

/// State shared by one round's threads.
struct WindowRound {
  Obj *x = nullptr;
  std::atomic<int> dStage{0}; // 1 fast-locked x, 2 re-entered x
  std::atomic<int> dRc{-1};
  std::atomic<bool> dGaveUp{false};
  std::atomic<bool> cDone{false};
  std::atomic<jitlock_thread *> dSelf{nullptr};
};

/// One round: D fast-locks x; C contends and inflates x anonymously; D
/// re-enters x (so the monitor is D's and D's lock stack is empty) and then
/// detaches or exits. Fixed: detach refuses / the exit guard releases x, and
/// C gets x. `round` only labels the diagnostics.
int publishWindowRound(Leave leave, unsigned round) {
  static std::deque<Obj> arena; // the child _exit()s; nothing is freed
  // On the heap: after a failure, threads left parked may still refer to it.
  auto owned = std::make_unique<WindowRound>();
  WindowRound &r = *owned;
  r.x = &arena.emplace_back();
  size_t misusesBefore = childMisuses().count();

  std::thread d([&] {
    jitlock_thread *t = jitlock_rt_attach();
    r.dSelf = t;
    if (jitlock_rt_monitor_enter(t, r.x) != JITLOCK_OK) {
      r.dGaveUp = true;
      return;
    }
    r.dStage = 1;
    if (!waitUntil([&] { return (r.x->hdr() & kLockMask) == kMonitor; })) {
      r.dGaveUp = true; // C never inflated x
      jitlock_rt_monitor_exit(t, r.x);
      jitlock_rt_detach();
      return;
    }
    jitlock_rt_monitor_enter(t, r.x); // re-entry: the monitor is now t's
    r.dStage = 2;
    if (leave == Leave::ExitThread)
      return; // the exit guard must release both holds
    int rc = jitlock_rt_detach();
    r.dRc = rc;
    if (rc == JITLOCK_OK)
      t = jitlock_rt_attach(); // the bug: the same thread structure owns x
    jitlock_rt_monitor_exit(t, r.x);
    jitlock_rt_monitor_exit(t, r.x);
    jitlock_rt_detach();
  });
  std::thread c([&] {
    jitlock_thread *t = jitlock_rt_attach();
    // Contends once x is fast-locked, so that its enter inflates x.
    while (r.dStage.load() < 1 && !r.dGaveUp.load())
      std::this_thread::yield();
    if (!r.dGaveUp) {
      jitlock_rt_monitor_enter(t, r.x);
      jitlock_rt_monitor_exit(t, r.x);
    }
    jitlock_rt_detach();
    r.cDone = true;
  });

  auto fail = [&](int code, const char *what) {
    fprintf(stderr,
            "round %u (%s): %s\n  x: %s\n  misuse reports this round: %zu\n",
            round, leave == Leave::Detach ? "detach" : "thread exit", what,
            describe(r.x).c_str(), childMisuses().count() - misusesBefore);
    fflush(stderr);
    // Threads may be parked for good: leave them to the child's _exit.
    if (d.joinable())
      d.detach();
    if (c.joinable())
      c.detach();
    owned.release();
    return code;
  };

  // D finishes whatever happens (detach returns, or the thread exits).
  d.join();
  if (r.dGaveUp)
    return fail(kChildSetup, r.dStage.load() < 1
                                 ? "the owner did not fast-lock x"
                                 : "the contender never inflated x");
  if (leave == Leave::Detach && r.dRc != JITLOCK_EHOLDING_LOCKS) {
    char msg[128];
    snprintf(msg, sizeof msg,
             "detach while owning x returned %s, expected "
             "JITLOCK_EHOLDING_LOCKS",
             st(r.dRc));
    // The owner released x after re-attaching: C finishes, then report.
    if (waitUntil([&] { return r.cDone.load(); })) {
      c.join();
    } else {
      c.detach();
      owned.release();
    }
    fprintf(stderr, "round %u: %s\n", round, msg);
    return kChildDetachSucceeded;
  }
  // Exactly one EHOLDING_LOCKS report, for D: from detach, or from the exit
  // guard (which then released x).
  {
    size_t holding = 0, other = 0;
    {
      std::lock_guard<std::mutex> g(childMisuses().mu);
      auto &recs = childMisuses().records;
      for (size_t i = misusesBefore; i < recs.size(); ++i) {
        if (recs[i].status == JITLOCK_EHOLDING_LOCKS &&
            recs[i].thread == r.dSelf)
          ++holding;
        else
          ++other;
      }
    }
    if (leave == Leave::ExitThread && holding == 0) {
      // Nothing released x: C stays parked on it.
      std::string msg =
          "the exit guard reported no held lock (x owned by " +
          std::string(jitlock_rt_owner_of(r.x) == r.dSelf ? "the exited thread"
                                                          : "someone else") +
          ")";
      return fail(kChildExitNotReported, msg.c_str());
    }
    if (holding != 1 || other != 0) {
      char msg[128];
      snprintf(msg, sizeof msg,
               "%zu EHOLDING_LOCKS reports for the owner, %zu other reports",
               holding, other);
      return fail(kChildWrongMisuse, msg);
    }
  }
  if (!waitUntil([&] { return r.cDone.load(); }))
    return fail(kChildContenderParked, "the contender never got x");
  c.join();
  if (jitlock_rt_owner_of(r.x) != nullptr)
    return fail(kChildStillOwned, "x is still owned");
  return kChildOk;
}

/// Runs publish-window rounds until `maxRounds` or `budget` is reached;
/// returns the first failure's exit code, or kChildOk with `rounds` set.
int runPublishWindowRounds(Leave leave, unsigned maxRounds,
                           std::chrono::milliseconds budget, unsigned &rounds) {
  auto start = Clock::now();
  for (rounds = 0; rounds < maxRounds && Clock::now() - start < budget;
       ++rounds)
    if (int rc = publishWindowRound(leave, rounds))
      return rc;
  return kChildOk;
}

/// Installs the misuse recorder.
bool setUpPublishWindowChild() {
  jitlock_rt_config cfg;
  jitlock_rt_default_config(&cfg);
  cfg.misuse_handler = &MisuseLog::handler;
  cfg.misuse_ctx = &childMisuses();
  return jitlock_rt_configure(&cfg) == JITLOCK_OK;
}

// exitguard_dbg: an OS thread exits while owning a monitor that a contender
// published before registering.
TEST_F(RegressionChildTest, ThreadExitReleasesMonitorPublishedByContender) {
  int rc = runInChild(
      [] {
        if (!setUpPublishWindowChild())
          return int(kChildSetup);
        // The scenario itself, bounded by rounds and time.
        unsigned windowRounds = 0;
        if (int rc = runPublishWindowRounds(Leave::ExitThread, 5000,
                                            std::chrono::milliseconds(1000),
                                            windowRounds))
          return rc;
        fprintf(stderr, "[ exit guard ] %u publish-window rounds\n",
                windowRounds);

        // The reproducer's shape: a thread exits holding a full lock stack
        // (plus inflated and re-entered monitors) while three contenders
        // inflate its objects. Bounded by rounds and time.
        constexpr unsigned kRounds = 5000;
        constexpr auto kBudget = std::chrono::milliseconds(1500);
        auto start = Clock::now();
        unsigned round = 0;
        for (; round < kRounds && Clock::now() - start < kBudget; ++round) {
          Obj *o = new Obj[12]; // leaked: the child _exit()s
          size_t before = childMisuses().count();
          std::atomic<jitlock_thread *> dying{nullptr};
          // Leaked too: contenders abandoned after a failure may still count.
          auto &done = *new std::atomic<int>(0);
          std::thread dt([&] {
            jitlock_thread *s = jitlock_rt_attach();
            dying = s;
            for (int i = 0; i < 10; ++i) // overflows the 8-slot lock stack
              jitlock_rt_monitor_enter(s, &o[i]);
            jitlock_rt_monitor_enter(s, &o[0]);
            jitlock_rt_monitor_enter(s, &o[0]);
            jitlock_rt_monitor_enter(s, &o[10]);
            jitlock_rt_wait_timed(s, &o[10], 0); // an owned monitor
            // Exits holding everything: the exit guard releases it.
          });
          std::vector<std::thread> cs;
          for (int k = 0; k < 3; ++k)
            cs.emplace_back([&done, o, k] {
              jitlock_thread *s = jitlock_rt_attach();
              for (int i = 0; i < 11; ++i) {
                jitlock_rt_monitor_enter(s, &o[(i + k) % 11]);
                jitlock_rt_monitor_exit(s, &o[(i + k) % 11]);
              }
              jitlock_rt_detach();
              done.fetch_add(1);
            });
          // After a failure the contenders may be parked for good: the child
          // _exit()s with them.
          auto abandon = [&](int code) {
            for (auto &t : cs)
              t.detach();
            return code;
          };
          dt.join();
          // Its exit guard has run: nothing may still be owned by it.
          for (int i = 0; i < 12; ++i)
            if (jitlock_rt_owner_of(&o[i]) == dying.load()) {
              fprintf(stderr,
                      "stress round %u: o%d still owned by the exited "
                      "thread: %s\n",
                      round, i, describe(&o[i]).c_str());
              return abandon(kChildStillOwned);
            }
          if (!waitUntil([&] { return done.load() == 3; })) {
            fprintf(stderr,
                    "stress round %u: contenders parked after the owner "
                    "exited\n",
                    round);
            for (int i = 0; i < 12; ++i)
              fprintf(stderr, "  o%d %s\n", i, describe(&o[i]).c_str());
            return abandon(kChildContenderParked);
          }
          for (auto &t : cs)
            t.join();
          for (int i = 0; i < 12; ++i)
            if (jitlock_rt_owner_of(&o[i])) {
              fprintf(stderr, "stress round %u: o%d still owned: %s\n", round,
                      i, describe(&o[i]).c_str());
              return int(kChildStillOwned);
            }
          MisuseRecord last = childMisuses().last();
          if (childMisuses().count() != before + 1 ||
              last.status != JITLOCK_EHOLDING_LOCKS || last.thread != dying) {
            fprintf(stderr,
                    "stress round %u: %zu misuse reports, expected one "
                    "EHOLDING_LOCKS for the exiting thread\n",
                    round, childMisuses().count() - before);
            return int(kChildWrongMisuse);
          }
        }
        fprintf(stderr, "[ exit guard ] %u stress rounds\n", round);
        return int(kChildOk);
      },
      120);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n); "
                          << "12 exit guard saw no lock, 13 contender parked, "
                             "14 still owned, 15 wrong misuse reports";
}

// unreg, unreg2: detach succeeded while owning a monitor that a contender
// published before registering.
TEST_F(RegressionChildTest,
       DetachRefusesWhileOwningMonitorPublishedByContender) {
  int rc = runInChild(
      [] {
        if (!setUpPublishWindowChild())
          return int(kChildSetup);
        // The reproducer's shape, bounded by rounds and time.
        unsigned rounds = 0;
        if (int rc = runPublishWindowRounds(
                Leave::Detach, 5000, std::chrono::milliseconds(1000), rounds))
          return rc;
        fprintf(stderr, "[ detach ] %u publish-window rounds\n", rounds);
        return int(kChildOk);
      },
      120);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n); "
                          << "11 detach succeeded, 13 contender parked, "
                             "14 still owned, 15 wrong misuse reports";
}

//===-- restore11 --------------------------------------------------------===//
//
// Bug: restore-locks on behalf of a stopped thread acquired A (a fast lock
// with no lock stack entry yet), found B held and returned EBUSY; its
// rollback's CAS lost to the embedder's transient 11 state on A, took the
// changed header for "not fast-locked" and gave up, leaving A fast-locked by
// nobody although EBUSY promises nothing changed.

TEST_F(RegressionTest, RestoreRollbackSurvivesEmbedderState) {
  Obj *a = newObj(), *b = newObj();
  Worker owner;  // stopped: restore-locks works on its behalf
  Worker holder; // holds B, so the restore fails after acquiring A
  holder.call([&] {
    ASSERT_EQ(jitlock_rt_monitor_enter(holder.thread(), b), JITLOCK_OK);
  });

  // The embedder: whenever A is fast-locked, marks it 11 for a moment (as a
  // GC marking it would) and puts the header back.
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> marks{0};
  std::thread marker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      uint64_t h = a->header.load();
      if ((h & kLockMask) == kFastLocked &&
          a->header.compare_exchange_strong(h, h | 0x3)) {
        for (int i = 0; i < 20; ++i)
          asm volatile("");
        a->header.store(h);
        marks.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });

  jitlock_relock_entry e[2] = {{a, JITLOCK_RELOCK_ELIDED},
                               {b, JITLOCK_RELOCK_ELIDED}};
  constexpr long kIterations = 2000000;
  constexpr auto kBudget = std::chrono::milliseconds(1500);
  std::atomic<long> it{0};
  std::string failure;
  {
    LoopWatchdog wd("restore-locks rollback loop", std::chrono::seconds(60),
                    [&] {
                      return "iteration " + std::to_string(it.load()) + ", A " +
                             describe(a);
                    });
    auto start = Clock::now();
    for (; it < kIterations; ++it) {
      if ((it & 255) == 0 && Clock::now() - start > kBudget)
        break;
      int rc = jitlock_rt_restore_locks(owner.thread(), e, 2, 0);
      if (rc != JITLOCK_EBUSY) {
        failure = std::string("restore-locks returned ") + st(rc) +
                  ", expected JITLOCK_EBUSY";
        break;
      }
      uint64_t h;
      while (((h = a->hdr()) & kLockMask) == 0x3) // the mark passes
        std::this_thread::yield();
      if (h != kUnlockedHeader) {
        char buf[96];
        snprintf(buf, sizeof buf, "EBUSY left A's header at %#" PRIx64, h);
        failure = std::string(buf) + " " + describe(a) + ", owner_of(A)=" +
                  (jitlock_rt_owner_of(a) ? "someone" : "nobody");
        break;
      }
    }
  }
  stop = true;
  marker.join();
  holder.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(holder.thread(), b), JITLOCK_OK);
  });
  ASSERT_TRUE(failure.empty()) << failure << " (iteration " << it.load() << ", "
                               << marks.load() << " marks)";
  printf("[ restore11 ] %ld iterations, %" PRIu64 " embedder marks\n",
         it.load(), marks.load());
  EXPECT_TRUE(lockStack(owner.thread()).empty());
  EXPECT_FALSE(jitlock_rt_holds_lock(owner.thread(), a));
  // A restore that can succeed still does.
  ASSERT_EQ(jitlock_rt_restore_locks(owner.thread(), e, 2, 0), JITLOCK_OK);
  EXPECT_EQ(lockStack(owner.thread()), (std::vector<void *>{a, b}));
  owner.call([&] {
    EXPECT_EQ(jitlock_rt_monitor_exit(owner.thread(), b), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(owner.thread(), a), JITLOCK_OK);
  });
  EXPECT_EQ(a->hdr(), withTableHash(a, kUnlockedHeader));
  EXPECT_EQ(b->hdr(), withTableHash(b, kUnlockedHeader));
}

//===-- dl_notified ------------------------------------------------------===//
//
// Bug: a waiter that has been notified waits to re-enter the monitor, but it
// was not marked blocked until its first wake-up, so find_deadlocks missed a
// deadlock through it: T1 holds B and waits on A; T2 takes A, notifies T1
// (which now needs A back) and blocks entering B.

/// Checks that `c` is the two-thread cycle {t1 waits for o1, t2 for o2}.
bool isCycle(const Cycle &c, jitlock_thread *t1, void *o1, jitlock_thread *t2,
             void *o2) {
  if (c.threads.size() != 2 || c.objs.size() != 2)
    return false;
  for (size_t i = 0; i < 2; ++i)
    if (c.threads[i] == t1 && c.objs[i] == o1 && c.threads[1 - i] == t2 &&
        c.objs[1 - i] == o2)
      return true;
  return false;
}

TEST_F(RegressionChildTest, DeadlockThroughNotifiedWaiterIsReported) {
  int rc = runInChild(
      [] {
        // Static or leaked: the threads stay deadlocked until _exit.
        static Obj a, b;
        static std::atomic<jitlock_thread *> t1{nullptr}, t2{nullptr};
        static std::atomic<int> stage{0};
        new std::thread([] {
          jitlock_thread *s = jitlock_rt_attach();
          t1 = s;
          jitlock_rt_monitor_enter(s, &b);
          jitlock_rt_monitor_enter(s, &a);
          stage = 1;
          jitlock_rt_wait(s, &a); // releases A only; keeps B
          _exit(kChildUnexpectedReturn);
        });
        if (!waitUntil([] { return stage.load() == 1; }) || !waitWaiting(&a))
          return int(kChildSetup);
        new std::thread([] {
          jitlock_thread *s = jitlock_rt_attach();
          t2 = s;
          jitlock_rt_monitor_enter(s, &a);
          jitlock_rt_notify(s, &a); // T1 now waits to re-enter A
          stage = 2;
          jitlock_rt_monitor_enter(s, &b); // B is T1's: deadlock
          _exit(kChildUnexpectedReturn);
        });
        if (!waitUntil([] { return stage.load() == 2; }) ||
            !waitEntryQueued(&b) || !waitEntryQueued(&a))
          return int(kChildNoBlock);
        if (inspect(&a).waiting != 0 || jitlock_rt_owner_of(&a) != t2 ||
            jitlock_rt_owner_of(&b) != t1)
          return int(kChildSetup);
        // The deadlock is permanent, so it must be reported; poll only to
        // let T1 finish marking itself blocked after releasing A.
        CycleLog log;
        size_t found = 0;
        waitFor(std::chrono::milliseconds(5000), [&] {
          log.cycles.clear();
          found = jitlock_rt_find_deadlocks(&CycleLog::fn, &log);
          return found != 0;
        });
        if (found != 1 || log.cycles.size() != 1) {
          fprintf(stderr,
                  "find_deadlocks returned %zu (%zu reported), expected the "
                  "cycle through the notified waiter\n  A %s\n  B %s\n",
                  found, log.cycles.size(), describe(&a).c_str(),
                  describe(&b).c_str());
          return int(kChildWrongCount);
        }
        if (!isCycle(log.cycles[0], t1, &a, t2, &b)) {
          fprintf(stderr, "the reported cycle has the wrong shape\n");
          return int(kChildWrongCycle);
        }
        if (jitlock_rt_find_deadlocks(nullptr, nullptr) != 1)
          return int(kChildWrongCount);
        return int(kChildOk);
      },
      60);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n); "
                          << "17 cycle not reported, 18 wrong cycle";
}

//===-- dl_cb ------------------------------------------------------------===//
//
// Bug: find_deadlocks ran its callback under the thread registry lock, so a
// callback that queried the runtime (owner_of scans the lock stacks under
// that lock) deadlocked itself.

TEST_F(RegressionChildTest, DeadlockCallbackMayQueryTheRuntime) {
  int rc = runInChild(
      [] {
        static Obj a, b;
        static std::atomic<jitlock_thread *> ta{nullptr}, tb{nullptr};
        static std::atomic<int> locked{0};
        auto body = [](Obj *mine, Obj *other,
                       std::atomic<jitlock_thread *> *out) {
          jitlock_thread *s = jitlock_rt_attach();
          *out = s;
          jitlock_rt_monitor_enter(s, mine);
          locked.fetch_add(1);
          while (locked.load() < 2)
            std::this_thread::yield();
          jitlock_rt_monitor_enter(s, other); // never returns
          _exit(kChildUnexpectedReturn);
        };
        new std::thread(body, &a, &b, &ta);
        new std::thread(body, &b, &a, &tb);
        if (!waitUntil([] { return locked.load() == 2; }))
          return int(kChildSetup);
        if (!waitEntryQueued(&a) || !waitEntryQueued(&b))
          return int(kChildNoBlock);

        // The callback must not hang: a broken runtime self-deadlocks here.
        static std::atomic<bool> returned{false};
        std::thread watchdog([] {
          if (!waitFor(std::chrono::milliseconds(10000),
                       [] { return returned.load(); })) {
            fprintf(stderr, "find_deadlocks' callback hung querying the "
                            "runtime\n");
            fflush(stderr);
            _exit(kChildCallbackHung);
          }
        });
        struct Answers {
          size_t calls = 0;
          bool ok = true;
          std::string why;
        } answers;
        size_t found = jitlock_rt_find_deadlocks(
            [](void *ctx, size_t n, jitlock_thread *const *threads,
               void *const *objs) {
              auto &ans = *static_cast<Answers *>(ctx);
              ++ans.calls;
              auto bad = [&](const char *why) {
                ans.ok = false;
                ans.why = why;
              };
              if (n != 2)
                return bad("cycle length");
              // thread[i] waits for obj[i], which thread[i+1] owns.
              for (size_t i = 0; i < n; ++i) {
                jitlock_thread *holder = threads[(i + 1) % n];
                if (jitlock_rt_owner_of(objs[i]) != holder)
                  return bad("owner_of");
                jitlock_lock_info info{};
                if (jitlock_rt_inspect(objs[i], &info) != JITLOCK_OK ||
                    info.owner != holder || info.entry_queued != 1)
                  return bad("inspect");
                if (!jitlock_rt_holds_lock(holder, objs[i]) ||
                    jitlock_rt_holds_lock(threads[i], objs[i]))
                  return bad("holds_lock");
                void *stack[8];
                if (jitlock_rt_lock_stack(threads[i], stack, 8) > 8)
                  return bad("lock_stack");
              }
              if (jitlock_rt_find_deadlocks(nullptr, nullptr) != 1)
                return bad("nested find_deadlocks");
              jitlock_rt_stats s;
              jitlock_rt_get_stats(&s);
              if (s.monitors_alive < 2)
                return bad("stats");
            },
            &answers);
        returned = true;
        watchdog.join();
        if (found != 1 || answers.calls != 1) {
          fprintf(stderr, "find_deadlocks returned %zu, %zu callbacks\n", found,
                  answers.calls);
          return int(kChildWrongCount);
        }
        if (!answers.ok) {
          fprintf(stderr, "wrong answer from the callback's query: %s\n",
                  answers.why.c_str());
          return int(kChildWrongAnswer);
        }
        return int(kChildOk);
      },
      60);
  EXPECT_EQ(rc, kChildOk) << "child exit code (1000+n = signal n); "
                          << "19 the callback hung, 20 wrong answer";
}

//===-- query_miss -------------------------------------------------------===//
//
// Bug: owner_of scanned the lock stacks once; an owner that held C for the
// whole call while shifting C's entry (unstructured exits below it) could be
// missed. It now rescans while the header is unchanged. Probabilistic: a
// bounded number of checked calls within a time budget.

TEST_F(RegressionTest, OwnerOfFindsOwnerThatShiftsItsLockStack) {
  Obj *xs[6];
  for (Obj *&x : xs)
    x = newObj();
  Obj *c = newObj(), *z = newObj();
  std::atomic<uint64_t> seq{0}; // odd while the worker holds C
  std::atomic<bool> stop{false};
  Worker w;
  w.post([&] {
    jitlock_thread *t = w.thread();
    while (!stop.load(std::memory_order_relaxed)) {
      for (Obj *x : xs)
        jitlock_rt_monitor_enter(t, x);
      jitlock_rt_monitor_enter(t, c);
      seq.fetch_add(1);   // odd: holding C
      for (Obj *x : xs) { // unstructured exits below C shift it down
        jitlock_rt_monitor_exit(t, x);
        jitlock_rt_monitor_enter(t, z);
        jitlock_rt_monitor_exit(t, z);
      }
      seq.fetch_add(1); // even
      jitlock_rt_monitor_exit(t, c);
    }
  });

  constexpr long kChecks = 2000000;
  constexpr auto kBudget = std::chrono::milliseconds(1500);
  std::atomic<long> calls{0}; // read by the watchdog
  long checked = 0, misses = 0;
  {
    LoopWatchdog wd("owner_of loop", std::chrono::seconds(60), [&] {
      return std::to_string(calls.load()) + " calls, C " + describe(c);
    });
    auto start = Clock::now();
    while (checked < kChecks && misses < 5) {
      long n = calls.fetch_add(1, std::memory_order_relaxed);
      if ((n & 1023) == 0 && Clock::now() - start > kBudget)
        break;
      uint64_t s1 = seq.load();
      jitlock_thread *o = jitlock_rt_owner_of(c);
      uint64_t s2 = seq.load();
      if (s1 != s2 || !(s1 & 1))
        continue; // C was not held throughout
      ++checked;
      if (o != w.thread()) {
        ++misses;
        ADD_FAILURE() << "owner_of(C) = " << (void *)o
                      << " while the worker held C throughout (seq " << s1
                      << ", after " << checked << " checked calls)";
      }
    }
  }
  stop = true;
  ASSERT_TRUE(w.join()) << "worker loop did not stop";
  printf("[ query_miss ] %ld owner_of calls, %ld while C was held throughout, "
         "%ld misses\n",
         calls.load(), checked, misses);
  EXPECT_EQ(misses, 0);
  EXPECT_GT(checked, 0) << "no call overlapped a whole hold of C";
  for (Obj *o : {c, z, xs[0]})
    EXPECT_EQ(jitlock_rt_owner_of(o), nullptr);
}

} // namespace
