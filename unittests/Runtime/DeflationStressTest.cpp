//===- DeflationStressTest.cpp - Deflation while the mutators run ---------===//
//
// Two stress tests of concurrent deflation (A1-A6 in Synchronizer.cpp).
//
// ExtremeDeflation: deflaters run without pause (a loop of
// jitlock_rt_deflate_idle on a thread of its own, the deflation thread with a
// threshold of 1 monitor and a period of 1 ms, and now and then a mutator)
// while 8 attached threads lock, nest, re-enter, wait, notify and hash a
// small set of objects; a VM thread takes safepoints meanwhile. Checked:
//  * mutual exclusion: a plain counter per object, incremented only under
//    its lock (ThreadSanitizer sees a missing happens-before edge), adds up;
//    an occupant slot, set by the first hold and cleared before the last
//    release, never finds another thread;
//  * no lost wake-up: the threads play ping-pong in pairs on four of the
//    objects with untimed waits, a fixed number of strokes each; a lost
//    notify leaves a pair waiting for good, which the watchdog reports
//    (JITLOCK_DEFLATION_WATCHDOG_S, default 60 s of no progress);
//  * hashes stable: the first hash of an object is the one every later hash
//    and peek returns, and the one its header keeps at the end;
//  * a safepoint sees no header change, though the deflaters run;
//  * the deflaters deflated, handshook, and (usually) lost a race or two.
//
// Churn: 10^6 objects, each inflated (by a timed wait, a non-adjacent re-entry,
// or the contention of the previous thread, which now and then locks what the
// next one holds) and then dropped, by 4 threads, with the deflation thread on
// (threshold 1024, no period). The mutators pace themselves as a VM paces
// allocation on its collector: before each batch of 256 inflations a thread
// waits, native, while more than 2048 monitors are alive. The bound: at most
// 2048 + 4 * 256 = 3072 monitors alive at any time (sampled after every batch
// and asserted), and at most twice that in memory (monitors_allocated: alive,
// plus one cycle's deflated monitors waiting for their handshake), where a
// million would be without reuse. The pacing stalls for good (a failure after
// 60 s) unless the deflation thread keeps up on its threshold alone. At the end
// every object has its exact header back, hash included (table storage
// adds one to each), and the RSS grew by less than 32 MiB. Under index storage
// the region holds only the threshold's 1024 monitors, so the threads'
// inflations also deflate for space, concurrently with each other and with
// the deflation thread, and must never fail for want of a monitor.
//
// Both run under the monitor storage of JITLOCK_TEST_MONITORS (pointer, the
// default, index or table).
//
// Seeds: JITLOCK_DEFLATION_SEED (default: from the clock), printed first.
//
//===----------------------------------------------------------------------===//
#include "RuntimeTestUtil.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <unistd.h>

using namespace jitlock_test;

namespace {

/// Aborts with `Why` when `Progress` stops moving for `Limit` seconds, after
/// `Dump` has printed what the test knows. A hang cannot be unwound.
class Watchdog {
public:
  Watchdog(const std::atomic<uint64_t> &Progress, std::function<void()> Dump)
      : Progress(Progress), Dump(std::move(Dump)),
        Limit(envU64("JITLOCK_DEFLATION_WATCHDOG_S", 60)),
        Thread([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> G(Mu);
      Done = true;
    }
    Cv.notify_all();
    Thread.join();
  }

private:
  void run() {
    uint64_t Last = Progress.load();
    auto Since = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> G(Mu);
    while (!Cv.wait_for(G, std::chrono::seconds(1), [&] { return Done; })) {
      uint64_t Now = Progress.load();
      if (Now != Last) {
        Last = Now;
        Since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - Since >
                 std::chrono::seconds(Limit)) {
        std::fprintf(stderr,
                     "no progress for %" PRIu64 " s: a lost wake-up or a "
                     "hang\n",
                     Limit);
        Dump();
        std::abort();
      }
    }
  }

  const std::atomic<uint64_t> &Progress;
  std::function<void()> Dump;
  uint64_t Limit;
  std::mutex Mu;
  std::condition_variable Cv;
  bool Done = false;
  std::thread Thread;
};

//===-- ExtremeDeflation --------------------------------------------------===//

constexpr int kMutators = 8;
constexpr int kPairs = kMutators / 2;
/// Objects 0-3 carry the ping-pong of pair 0-3 too; 4-5 are only locked.
constexpr int kObjs = kPairs + 2;

struct alignas(64) Shared {
  Obj O[kObjs];
  /// Incremented under O[k]'s lock only: plain, for ThreadSanitizer.
  uint64_t Count[kObjs] = {};
  /// The ping-pong: whose stroke is next (0 or 1), under O[p]'s lock.
  int Turn[kPairs] = {};
  uint64_t Strokes[kPairs] = {};
  std::atomic<uint64_t> Occupant[kObjs] = {};
  std::atomic<uint64_t> FirstHash[kObjs] = {};
  std::atomic<uint64_t> Violations{0}, Progress{0};
  std::atomic<bool> Stop{false};
  jitlock_rt_layout Layout{};
};

/// One mutator: a seeded random walk over the actions below.
class Mutator {
public:
  Mutator(Shared &S, int Id, uint64_t Seed, uint64_t Iterations,
          uint64_t StrokesEach)
      : S(S), Id(Id), Me(uint64_t(Id) + 1), Rng(Seed * 1000003 + Id),
        Iterations(Iterations), StrokesLeft(StrokesEach) {}

  void run() {
    T = jitlock_rt_attach();
    ASSERT_NE(T, nullptr);
    for (uint64_t I = 0; I < Iterations || StrokesLeft; ++I) {
      unsigned R = Rng() % 100;
      if (I >= Iterations || R < 25) {
        if (StrokesLeft)
          stroke();
      } else if (R < 65) {
        nest();
      } else if (R < 80) {
        hash(int(Rng() % kObjs));
      } else if (R < 90) {
        notifySome();
      } else if (R < 98) {
        timedWait();
      } else {
        jitlock_rt_deflate_idle(); // A mutator as a deflater, holding nothing.
      }
      pollAsCompiledCode(T, S.Layout);
      S.Progress.fetch_add(1, std::memory_order_relaxed);
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  }

  /// Increments recorded per object, for the final sum.
  uint64_t Increments[kObjs] = {};
  /// What the thread does now, for the watchdog's report.
  std::atomic<const char *> Doing{"starting"};

private:
  void violation(const char *What, int K) {
    S.Violations.fetch_add(1);
    ADD_FAILURE() << "mutator " << Id << ": " << What << " on object " << K
                  << " " << describe(&S.O[K]);
  }
  void enter(int K) {
    ASSERT_EQ(jitlock_rt_monitor_enter(T, &S.O[K]), JITLOCK_OK);
  }
  void exit(int K) {
    ASSERT_EQ(jitlock_rt_monitor_exit(T, &S.O[K]), JITLOCK_OK);
  }
  /// The first hold of K: the occupant slot must be free.
  void occupy(int K) {
    uint64_t Prev = S.Occupant[K].exchange(Me, std::memory_order_relaxed);
    if (Prev != 0)
      violation("mutual exclusion: another occupant", K);
  }
  void vacate(int K) {
    if (S.Occupant[K].exchange(0, std::memory_order_relaxed) != Me)
      violation("mutual exclusion: lost the occupant slot", K);
  }
  void count(int K) {
    ++S.Count[K];
    ++Increments[K];
  }

  /// One to three objects in increasing order (deadlock-free), each maybe
  /// entered twice (A A), then maybe the outermost again (A B A, inflating),
  /// and a hash and a count inside.
  void nest() {
    Doing = "nest";
    int Depth = 1 + int(Rng() % 3);
    int Held[3], N = 0;
    int K = int(Rng() % kObjs);
    for (; N < Depth && K < kObjs; ++N, K += 1 + int(Rng() % 2)) {
      enter(K);
      occupy(K);
      count(K);
      Held[N] = K;
      if (Rng() % 4 == 0) {
        enter(K); // A A
        count(K);
        exit(K);
      }
    }
    bool Reenter = N > 1 && Rng() % 3 == 0;
    if (Reenter) {
      enter(Held[0]); // A B A
      count(Held[0]);
      if (Rng() % 2)
        hash(Held[0]);
    }
    if (Reenter)
      exit(Held[0]);
    // Unstructured now and then: release the outermost first.
    if (N > 1 && Rng() % 4 == 0) {
      vacate(Held[0]);
      exit(Held[0]);
      for (int I = N - 1; I > 0; --I) {
        vacate(Held[I]);
        exit(Held[I]);
      }
    } else {
      for (int I = N - 1; I >= 0; --I) {
        vacate(Held[I]);
        exit(Held[I]);
      }
    }
  }

  /// One ping-pong stroke on the pair's object: wait (untimed) for our turn,
  /// then hand the turn over and notify the partner.
  void stroke() {
    Doing = "ping-pong";
    const int P = Id / 2, Role = Id % 2;
    enter(P);
    occupy(P);
    while (S.Turn[P] != Role) {
      vacate(P);
      Doing = "ping-pong wait";
      ASSERT_EQ(jitlock_rt_wait(T, &S.O[P]), JITLOCK_OK);
      Doing = "ping-pong";
      occupy(P);
    }
    S.Turn[P] = 1 - Role;
    ++S.Strokes[P];
    count(P);
    --StrokesLeft;
    // notifyAll: other threads never wait untimed on P, but they may sit in
    // its wait set for a timed wait, ahead of the partner, and a single
    // notify would then wake one of them and leave both partners waiting
    // for good (the test's protocol would lose the stroke, not the
    // runtime). notifySome exercises notify.
    ASSERT_EQ(jitlock_rt_notify_all(T, &S.O[P]), JITLOCK_OK);
    vacate(P);
    exit(P);
  }

  void hash(int K) {
    Doing = "hash";
    uint64_t H = jitlock_rt_identity_hash(T, &S.O[K]);
    uint64_t First = 0;
    if (H == 0 ||
        (!S.FirstHash[K].compare_exchange_strong(First, H) && First != H))
      violation("identity hash changed", K);
    if (jitlock_rt_peek_hash(&S.O[K]) != H)
      violation("peeked hash differs", K);
  }

  void notifySome() {
    Doing = "notify";
    int K = int(Rng() % kObjs);
    enter(K);
    if (Rng() % 2)
      EXPECT_EQ(jitlock_rt_notify(T, &S.O[K]), JITLOCK_OK);
    else
      EXPECT_EQ(jitlock_rt_notify_all(T, &S.O[K]), JITLOCK_OK);
    exit(K);
  }

  /// A short timed wait, on a recursively held object now and then. A
  /// notify may end it; either way the holds are back afterwards.
  void timedWait() {
    Doing = "timed wait";
    int K = int(Rng() % kObjs);
    bool Twice = Rng() % 2;
    enter(K);
    if (Twice)
      enter(K);
    int Rc = jitlock_rt_wait_timed(T, &S.O[K], (Rng() % 50) * 1000);
    EXPECT_TRUE(Rc == JITLOCK_OK || Rc == JITLOCK_ETIMEDOUT) << st(Rc);
    occupy(K);
    count(K);
    jitlock_lock_info I = inspect(&S.O[K]);
    if (I.owner != T || I.holds != (Twice ? 2u : 1u))
      violation("wait did not give the holds back", K);
    vacate(K);
    if (Twice)
      exit(K);
    exit(K);
  }

  Shared &S;
  const int Id;
  const uint64_t Me;
  std::mt19937_64 Rng;
  const uint64_t Iterations;
  uint64_t StrokesLeft;
  jitlock_thread *T = nullptr;
};

TEST(DeflationStressTest, ExtremeDeflation) {
  const uint64_t Seed = seedFromEnv("DeflationStressTest.ExtremeDeflation",
                                    "JITLOCK_DEFLATION_SEED");
  const uint64_t Iterations = kSanitized ? 30000 : 100000;
  const uint64_t StrokesEach = Iterations / 8;
  StorageScope Storage;
  ASSERT_TRUE(Storage.configured());
  auto S = std::make_unique<Shared>();
  jitlock_rt_get_layout(&S->Layout);
  jitlock_deflation_stats D0 = deflationStats();
  jitlock_rt_stats S0 = stats();

  jitlock_deflation_policy Policy;
  jitlock_rt_default_deflation_policy(&Policy);
  Policy.period_ms = 1;
  Policy.idle_threshold = 1;
  ASSERT_EQ(jitlock_rt_start_deflation(&Policy), JITLOCK_OK);
  std::atomic<uint64_t> LoopDeflated{0}, Safepoints{0};
  std::thread Deflater([&] {
    while (!S->Stop.load())
      LoopDeflated.fetch_add(jitlock_rt_deflate_idle());
  });
  // A safepoint sees every header as it was when the threads stopped: no
  // deflater runs inside another's safepoint.
  std::thread Vm([&] {
    std::mt19937_64 Rng(Seed);
    while (!S->Stop.load()) {
      ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
      uint64_t Before[kObjs], After[kObjs];
      for (int K = 0; K < kObjs; ++K)
        Before[K] = S->O[K].hdr();
      std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 200));
      for (int K = 0; K < kObjs; ++K)
        After[K] = S->O[K].hdr();
      for (int K = 0; K < kObjs; ++K)
        if (Before[K] != After[K]) {
          S->Violations.fetch_add(1);
          ADD_FAILURE() << "object " << K << "'s header changed inside a "
                        << "safepoint: " << std::hex << Before[K] << " -> "
                        << After[K];
        }
      if (Rng() % 4 == 0)
        jitlock_rt_deflate_idle();
      ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
      Safepoints.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 2000));
    }
  });

  std::vector<std::unique_ptr<Mutator>> Mutators;
  for (int I = 0; I < kMutators; ++I)
    Mutators.push_back(
        std::make_unique<Mutator>(*S, I, Seed, Iterations, StrokesEach));
  {
    Watchdog Dog(S->Progress, [&] {
      for (int I = 0; I < kMutators; ++I)
        std::fprintf(stderr, "  mutator %d: %s\n", I,
                     Mutators[I]->Doing.load());
      for (int K = 0; K < kObjs; ++K)
        std::fprintf(stderr, "  object %d: %s\n", K,
                     describe(&S->O[K]).c_str());
      std::fprintf(stderr, "  seed %" PRIu64 "\n", Seed);
    });
    std::vector<std::thread> Threads;
    for (auto &M : Mutators)
      Threads.emplace_back([&M] { M->run(); });
    for (auto &Th : Threads)
      Th.join();
  }
  S->Stop = true;
  Deflater.join();
  Vm.join();
  ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);

  EXPECT_EQ(S->Violations.load(), 0u) << "seed " << Seed;
  for (int K = 0; K < kObjs; ++K) {
    uint64_t Recorded = 0;
    for (auto &M : Mutators)
      Recorded += M->Increments[K];
    EXPECT_EQ(S->Count[K], Recorded) << "object " << K << ", seed " << Seed;
  }
  for (int P = 0; P < kPairs; ++P)
    EXPECT_EQ(S->Strokes[P], 2 * StrokesEach) << "pair " << P;
  // Every idle monitor goes; every header is the unlocked one with its hash.
  jitlock_rt_deflate_idle();
  EXPECT_EQ(stats().monitors_alive, 0u);
  for (int K = 0; K < kObjs; ++K) {
    uint64_t H = S->FirstHash[K].load();
    EXPECT_EQ(S->O[K].hdr(), kUnlockedHeader | ((H << kHashShift) & kHashMask))
        << "object " << K;
    EXPECT_EQ(jitlock_rt_peek_hash(&S->O[K]), H) << "object " << K;
  }
  jitlock_deflation_stats D1 = deflationStats();
  jitlock_rt_stats S1 = stats();
  std::printf("  %" PRIu64 " inflations; deflated %" PRIu64 " (loop %" PRIu64
              ") in %" PRIu64 " cycles (thread %" PRIu64 "), %" PRIu64
              " handshakes, %" PRIu64 " cancelled; %" PRIu64
              " safepoints; %" PRIu64 " contended enters, %" PRIu64 " parks\n",
              S1.inflations - S0.inflations,
              D1.monitors_deflated - D0.monitors_deflated, LoopDeflated.load(),
              D1.cycles - D0.cycles, D1.thread_cycles - D0.thread_cycles,
              D1.handshakes - D0.handshakes, D1.cancelled - D0.cancelled,
              Safepoints.load(), S1.contended_enters - S0.contended_enters,
              S1.parks - S0.parks);
  EXPECT_GT(D1.monitors_deflated - D0.monitors_deflated, 0u);
  EXPECT_GT(D1.handshakes - D0.handshakes, 0u);
  EXPECT_GT(D1.thread_cycles - D0.thread_cycles, 0u);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

//===-- Churn -------------------------------------------------------------===//

constexpr int kChurnThreads = 4;
constexpr uint64_t kBatch = 256;
constexpr uint64_t kThreshold = 1024;
constexpr uint64_t kSoftLimit = 2 * kThreshold;
constexpr uint64_t kBound = kSoftLimit + kChurnThreads * kBatch;

TEST(DeflationStressTest, ChurnKeepsLiveMonitorsBounded) {
  const uint64_t Seed =
      seedFromEnv("DeflationStressTest.Churn", "JITLOCK_DEFLATION_SEED");
  const uint64_t Total = 1000000;
  // Index storage gets room for the threshold's monitors only: the region
  // fills before the pacing stalls, and the threads' inflations deflate for
  // space (and wait for each other's cycles and the thread's) meanwhile.
  StorageScope Storage(/*indexCapacity=*/kThreshold);
  ASSERT_TRUE(Storage.configured());
  std::vector<Obj> Objects(Total);
  // Embedder bits that differ between objects, and a hash on one in 16,
  // installed while the object is inflated.
  std::vector<uint64_t> Hashes(Total);
  for (uint64_t I = 0; I < Total; ++I)
    Objects[I].header.store(kUnlockedHeader | ((I & 0x3f) << 2) |
                                (uint64_t(I % 7) << 40),
                            std::memory_order_relaxed);
  std::vector<uint64_t> Initial(Total);
  for (uint64_t I = 0; I < Total; ++I)
    Initial[I] = Objects[I].hdr();

  jitlock_deflation_policy Policy;
  jitlock_rt_default_deflation_policy(&Policy);
  Policy.period_ms = 0; // the threshold alone must keep up
  Policy.idle_threshold = kThreshold;
  ASSERT_EQ(jitlock_rt_start_deflation(&Policy), JITLOCK_OK);
  jitlock_rt_deflate_idle(); // what other tests left
  jitlock_deflation_stats D0 = deflationStats();
  jitlock_rt_stats S0 = stats();
  jitlock_rt_layout Layout;
  jitlock_rt_get_layout(&Layout);

  std::atomic<uint64_t> MaxAlive{0}, Progress{0}, Stalls{0};
  std::atomic<bool> Failed{false};
  /// The object each thread holds now, for the previous thread to contend.
  std::atomic<Obj *> Current[kChurnThreads] = {};
  auto Work = [&](int Id) {
    jitlock_thread *T = jitlock_rt_attach();
    ASSERT_NE(T, nullptr);
    std::mt19937_64 Rng(Seed + Id);
    // Thread Id takes objects Id, Id + 4, ... in batches.
    for (uint64_t I = Id; I < Total && !Failed;) {
      // The pacing: wait, safe, while the deflation thread catches up. The
      // count read first, after the previous batch, is the peak.
      uint64_t Alive = stats().monitors_alive;
      for (uint64_t Seen = MaxAlive.load();
           Alive > Seen && !MaxAlive.compare_exchange_weak(Seen, Alive);) {
      }
      auto Deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(60);
      for (; Alive > kSoftLimit; Alive = stats().monitors_alive) {
        Stalls.fetch_add(1, std::memory_order_relaxed);
        NativeScope Waiting(T);
        if (std::chrono::steady_clock::now() > Deadline) {
          ADD_FAILURE() << Alive << " monitors alive for 60 s: the deflation "
                        << "thread does not keep up (seed " << Seed << ")";
          Failed = true;
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      for (uint64_t N = 0; N < kBatch && I < Total; ++N, I += kChurnThreads) {
        Obj *O = &Objects[I];
        ASSERT_EQ(jitlock_rt_monitor_enter(T, O), JITLOCK_OK);
        Current[Id].store(O, std::memory_order_release);
        switch (Rng() % 4) {
        case 0: {
          // A B A with a private second object: inflates A.
          Obj Mine;
          ASSERT_EQ(jitlock_rt_monitor_enter(T, &Mine), JITLOCK_OK);
          ASSERT_EQ(jitlock_rt_monitor_enter(T, O), JITLOCK_OK);
          ASSERT_EQ(jitlock_rt_monitor_exit(T, O), JITLOCK_OK);
          ASSERT_EQ(jitlock_rt_monitor_exit(T, &Mine), JITLOCK_OK);
          break;
        }
        case 1:
          // Held fast a little longer, for the previous thread to contend
          // (a core given away now and then makes that likely).
          for (int Spin = 0; Spin < 256; ++Spin)
            std::atomic_signal_fence(std::memory_order_seq_cst);
          if (Rng() % 8 == 0)
            std::this_thread::yield();
          [[fallthrough]];
        default:
          // A timed wait: inflates, unless a contender did so first.
          EXPECT_EQ(jitlock_rt_wait_timed(T, O, 0), JITLOCK_ETIMEDOUT);
          break;
        }
        if (I % 16 == 0)
          Hashes[I] = jitlock_rt_identity_hash(T, O);
        Current[Id].store(nullptr, std::memory_order_relaxed);
        ASSERT_EQ(jitlock_rt_monitor_exit(T, O), JITLOCK_OK);
        // Contention: the next thread's object, which it may hold fast-locked
        // (a contender then inflates it with an anonymous owner), or have
        // dropped already.
        if (Rng() % 4 == 0)
          if (Obj *Theirs = Current[(Id + 1) % kChurnThreads].load(
                  std::memory_order_acquire)) {
            ASSERT_EQ(jitlock_rt_monitor_enter(T, Theirs), JITLOCK_OK);
            ASSERT_EQ(jitlock_rt_monitor_exit(T, Theirs), JITLOCK_OK);
          }
        pollAsCompiledCode(T, Layout);
        Progress.fetch_add(1, std::memory_order_relaxed);
      }
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  };
  long RssBefore = 0, RssAfter = 0;
  auto Rss = [] {
    long Pages = 0, Resident = 0;
    if (FILE *F = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(F, "%ld %ld", &Pages, &Resident) != 2)
        Resident = 0;
      std::fclose(F);
    }
    return Resident * (sysconf(_SC_PAGESIZE) / 1024);
  };
  RssBefore = Rss();
  {
    Watchdog Dog(Progress, [&] {
      std::fprintf(stderr, "  %" PRIu64 " monitors alive, seed %" PRIu64 "\n",
                   stats().monitors_alive, Seed);
    });
    std::vector<std::thread> Threads;
    for (int Id = 0; Id < kChurnThreads; ++Id)
      Threads.emplace_back(Work, Id);
    for (auto &Th : Threads)
      Th.join();
  }
  RssAfter = Rss();
  ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
  ASSERT_FALSE(Failed.load());
  jitlock_rt_stats S1 = stats();
  jitlock_deflation_stats D1 = deflationStats();
  std::printf("  %" PRIu64 " inflations, %" PRIu64 " deflated in %" PRIu64
              " thread cycles; at most %" PRIu64
              " monitors alive (bound %" PRIu64 "), %" PRIu64
              " allocated, %" PRIu64 " pacing waits, %" PRIu64
              " contended enters; RSS %ld -> %ld KiB\n",
              S1.inflations - S0.inflations,
              D1.monitors_deflated - D0.monitors_deflated,
              D1.thread_cycles - D0.thread_cycles, MaxAlive.load(), kBound,
              D1.monitors_allocated, Stalls.load(),
              S1.contended_enters - S0.contended_enters, RssBefore, RssAfter);
  // A timed-out waiter whose idle monitor was deflated before it re-entered
  // inflates again: at least one inflation per object.
  EXPECT_GE(S1.inflations - S0.inflations, Total);
  EXPECT_LE(MaxAlive.load(), kBound);
  // Deflated monitors are reused: memory for the bound, plus one cycle's
  // deflated monitors waiting for their handshake, plus what was free.
  EXPECT_LE(D1.monitors_allocated, D0.monitors_allocated + 2 * kBound);
  // So the process grows by what 2 * kBound monitors (192 bytes each), the
  // table (a slot array for as many, and those retired before a handshake)
  // and the threads' own allocations take: far below 32 MiB, where a
  // million monitors would take 183 MiB. Sanitizers keep freed memory.
  if (!kSanitized)
    EXPECT_LE(RssAfter - RssBefore, 32L * 1024) << "KiB";
  // The thread's threshold did the work: all but what it left behind.
  EXPECT_GE(D1.monitors_deflated - D0.monitors_deflated, Total - kBound);
  jitlock_rt_deflate_idle();
  EXPECT_EQ(stats().monitors_alive, 0u);
  uint64_t Wrong = 0;
  for (uint64_t I = 0; I < Total; ++I) {
    uint64_t Want =
        Initial[I] | (I % 16 == 0 ? (Hashes[I] << kHashShift) & kHashMask : 0);
    // Table storage hashed every object it inflated.
    uint64_t Got = Objects[I].hdr();
    if (Storage.storage() == JITLOCK_MONITORS_TABLE && I % 16 != 0)
      Got &= ~kHashMask;
    if (Got != Want && Wrong++ < 5)
      ADD_FAILURE() << "object " << I << ": header " << std::hex
                    << Objects[I].hdr() << ", want " << Want;
  }
  EXPECT_EQ(Wrong, 0u);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

} // namespace
