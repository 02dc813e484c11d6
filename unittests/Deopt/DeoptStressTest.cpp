//===- DeoptStressTest.cpp - Deopts under contention and deflation --------===//
//
// Many threads deoptimize the shapes of Inputs/shapes.ll over and over on
// objects other threads lock at the same time, with and without the
// deflation thread deflating the monitors contention leaves behind. Each
// restored frame must hold every object exactly as often as its unelided
// version would (checked in Resume, before the continuation runs), and the
// counts the shapes increment inside their locks must add up.
//
// Elision is legal only for objects no other thread contends for while the
// frame holds them, or for re-entries: the shapes' elided objects are per
// thread, or re-entries of a shared one, or (in the deflation race) taken in
// the same order by every thread.
//
//===----------------------------------------------------------------------===//
#include "DeoptTestUtil.h"

#include <barrier>
#include <random>

using namespace jitlock_test;
using namespace jitlock::deopt;

namespace {

constexpr unsigned Threads = 4;
constexpr unsigned Iterations = 3000;

/// What Resume must find: each object and the holds it must have.
thread_local std::vector<std::pair<void *, uint64_t>> Expected;
std::atomic<uint64_t> BadRestores{0};

void checkRestored() {
  for (auto [Obj, Holds] : Expected) {
    jitlock_lock_info I{};
    jitlock_rt_inspect(Obj, &I);
    if (I.owner != jitlock_rt_current() || I.holds != Holds)
      BadRestores.fetch_add(1);
  }
}

uint64_t seed() {
  uint64_t S = std::random_device()();
  std::printf("seed %llu\n", (unsigned long long)S);
  return S;
}

class DeoptStress : public DeoptFixture {
protected:
  void TearDown() override {
    if (Deflating)
      EXPECT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    DeoptFixture::TearDown();
  }

  /// Runs `Body(tid, rng)` on `Threads` attached threads released together.
  template <typename Fn> void onThreads(uint64_t Seed, Fn Body) {
    std::barrier Gate(Threads);
    std::vector<std::thread> Ts;
    for (unsigned T = 0; T != Threads; ++T)
      Ts.emplace_back([&, T] {
        jitlock_thread *Self = jitlock_rt_attach();
        ASSERT_NE(Self, nullptr);
        OnResume = checkRestored;
        std::mt19937_64 Rng(Seed + T);
        {
          NativeScope N(Self);
          Gate.arrive_and_wait();
        }
        Body(T, Rng);
        EXPECT_TRUE(lockStack(Self).empty());
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
      });
    {
      NativeScope N(self);
      for (std::thread &T : Ts)
        T.join();
    }
  }

  bool Deflating = false;
};

TEST_F(DeoptStress, DeoptsUnderContention) {
  uint64_t Seed = seed();
  Obj *Shared = newObj();
  std::vector<Obj *> Local = newObjArray(Threads);
  auto Outer = fn<OptFn>("outer.opt"), Recursive = fn<OptFn>("recursive.opt");
  using BaseFn = uint64_t (*)(void *, void *, void *, uint64_t, void (*)());
  auto Nested = fn<BaseFn>("nested.base");
  std::atomic<uint64_t> Deopts{0};
  uint64_t Before = deoptStats().Deopts;
  uint64_t Contended0 = stats().contended_enters;
  // A round whose threads never met proves little: go on until they did.
  unsigned Rounds = 0;
  do
    onThreads(Seed + Rounds * Threads, [&](unsigned T, std::mt19937_64 &Rng) {
      Obj *Mine = Local[T];
      for (unsigned I = 0; I != Iterations; ++I) {
        switch (Rng() % 3) {
        case 0: // [mine E, shared H]: mine relocked below shared.
          Expected = {{Mine, 1}, {Shared, 1}};
          EXPECT_EQ(callDeoptimizable(Outer, (void *)Shared, (void *)Mine,
                                      (void *)nullptr, uint64_t(41)),
                    42u);
          Deopts.fetch_add(1);
          break;
        case 1: // [shared H, shared E, shared E]
          Expected = {{Shared, 3}};
          EXPECT_EQ(callDeoptimizable(Recursive, (void *)Shared,
                                      (void *)nullptr, (void *)nullptr,
                                      uint64_t(41)),
                    42u);
          Deopts.fetch_add(1);
          break;
        default: // the baseline, contending for shared
          Nested(Shared, Mine, nullptr, 41, +[] {});
          break;
        }
      }
    });
  while (++Rounds < 20 && stats().contended_enters == Contended0);
  EXPECT_GT(stats().contended_enters, Contended0) << "never contended";
  EXPECT_EQ(Shared->payload, uint64_t(Threads) * Iterations * Rounds);
  EXPECT_EQ(deoptStats().Deopts - Before, Deopts.load());
  EXPECT_EQ(BadRestores.exchange(0), 0u);
  EXPECT_EQ(inspect(Shared).owner, nullptr);
  std::printf("%u rounds: contended enters %llu, inflations %llu\n", Rounds,
              (unsigned long long)(stats().contended_enters - Contended0),
              (unsigned long long)stats().inflations);
}

TEST_F(DeoptStress, RelockRacesDeflation) {
  // Deopting threads restore [s H, t E]: t is acquired at restore, while
  // churning threads lock t alone (inflating it by contention) and the
  // deflation thread deflates its idle monitor. Rounds go on until the
  // deflater has deflated monitors during them (at most MaxRounds).
  uint64_t Seed = seed();
  constexpr unsigned MaxRounds = 200, Wanted = 20;
  Obj *S = newObj(), *T = newObj();
  jitlock_deflation_policy Policy;
  jitlock_rt_default_deflation_policy(&Policy);
  Policy.period_ms = 1;
  Policy.idle_threshold = 1;
  ASSERT_EQ(jitlock_rt_start_deflation(&Policy), JITLOCK_OK);
  Deflating = true;
  jitlock_deflation_stats D0{}, D1{};
  jitlock_rt_get_deflation_stats(&D0);
  auto Nested = fn<OptFn>("nested.opt");
  std::atomic<uint64_t> Churned{0}, Deopted{0};
  unsigned Rounds = 0;
  do {
    onThreads(Seed + Rounds * Threads, [&](unsigned Tid, std::mt19937_64 &Rng) {
      jitlock_thread *Self = jitlock_rt_current();
      for (unsigned I = 0; I != Iterations / 10; ++I) {
        // The deflater handshakes every thread: this is our poll.
        jitlock_rt_safepoint_poll(Self);
        if (Tid % 2 == 0 || Rng() % 4 == 0) {
          Expected = {{S, 1}, {T, 1}};
          EXPECT_EQ(callDeoptimizable(Nested, (void *)S, (void *)T,
                                      (void *)nullptr, uint64_t(41)),
                    42u);
          Deopted.fetch_add(1);
        } else {
          ASSERT_EQ(jitlock_rt_monitor_enter(Self, T), JITLOCK_OK);
          T->payload++;
          ASSERT_EQ(jitlock_rt_monitor_exit(Self, T), JITLOCK_OK);
          Churned.fetch_add(1);
        }
      }
    });
    jitlock_rt_get_deflation_stats(&D1);
  } while (++Rounds < MaxRounds &&
           D1.monitors_deflated - D0.monitors_deflated < Wanted);
  EXPECT_EQ(S->payload, Deopted.load());
  EXPECT_EQ(T->payload, Churned.load());
  EXPECT_EQ(BadRestores.exchange(0), 0u);
  std::printf("%u rounds: deflated %llu monitors in %llu cycles, %llu "
              "cancelled\n",
              Rounds,
              (unsigned long long)(D1.monitors_deflated - D0.monitors_deflated),
              (unsigned long long)(D1.cycles - D0.cycles),
              (unsigned long long)(D1.cancelled - D0.cancelled));
  EXPECT_GE(D1.monitors_deflated - D0.monitors_deflated, 1u)
      << "the deflater never raced the relocks";
  ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
  Deflating = false;
}

} // namespace
