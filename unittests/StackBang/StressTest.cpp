//===- StressTest.cpp - Concurrent overflows and recoveries ---------------===//
//
// Several threads overflow their stacks over and over at the same time,
// through the bang check and through the SIGSEGV backstop, while they
// contend on shared locks taken inside the guarded calls. Every recovery
// must release exactly what its call took, hand contended monitors over,
// and leave the zones protected. Shared locks are taken in one global
// order, so the workload itself cannot deadlock.
//
// Environment: JITLOCK_STACKBANG_SEED (default: random, printed),
// JITLOCK_STACKBANG_ROUNDS (per thread, default 40),
// JITLOCK_STACKBANG_THREADS (default 8).
//
//===----------------------------------------------------------------------===//
#include "Recursion.h"
#include "StackBangTestUtil.h"

#include <random>

using namespace stackbang_test;

namespace {

unsigned envOr(const char *Name, unsigned Default) {
  const char *V = getenv(Name);
  return V && *V ? unsigned(strtoul(V, nullptr, 0)) : Default;
}

/// One guarded call's plan: which object each level locks, shared objects
/// in non-decreasing order.
struct RoundPlan {
  std::vector<std::pair<unsigned, void *>> Locks; // by depth
  size_t Next = 0;
  static void *at(void *Ctx, unsigned Depth) {
    auto *P = static_cast<RoundPlan *>(Ctx);
    if (P->Next < P->Locks.size() && P->Locks[P->Next].first == Depth)
      return P->Locks[P->Next++].second;
    return nullptr;
  }
};

struct NativeRound {
  jitlock_thread *Self;
  std::vector<void *> Locks;
  size_t Taken = 0;
  static void run(void *P) {
    auto *N = static_cast<NativeRound *>(P);
    for (void *O : N->Locks)
      if (jitlock_rt_monitor_enter(N->Self, O) == JITLOCK_OK)
        ++N->Taken;
    nativeRecurse(0, ~0u);
  }
};

struct CheckedRound {
  CheckedRecursion R;
  static void run(void *P) {
    checkedRecurse(static_cast<CheckedRound *>(P)->R, 0);
  }
};

TEST(StackBangStress, ConcurrentOverflowsWithContendedLocks) {
  unsigned Seed = envOr("JITLOCK_STACKBANG_SEED", std::random_device{}());
  unsigned Rounds = envOr("JITLOCK_STACKBANG_ROUNDS", 40);
  unsigned NumThreads = envOr("JITLOCK_STACKBANG_THREADS", 8);
  printf("seed %u (JITLOCK_STACKBANG_SEED), %u threads x %u rounds\n", Seed,
         NumThreads, Rounds);
  fflush(stdout);
  SCOPED_TRACE("JITLOCK_STACKBANG_SEED=" + std::to_string(Seed));
  ASSERT_EQ(jitlock_rt_current(), nullptr);

  std::deque<Obj> Arena;
  std::vector<Obj *> Shared;
  for (int I = 0; I < 6; ++I)
    Shared.push_back(&Arena.emplace_back());
  // Private objects per thread: one held fast before every call, one held
  // inflated, and a pool locked inside.
  std::vector<std::vector<Obj *>> Private(NumThreads);
  for (auto &P : Private)
    for (int I = 0; I < 10; ++I)
      P.push_back(&Arena.emplace_back());

  // Half of the shared objects start inflated.
  runOnThread(0, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    for (size_t I = 0; I < Shared.size(); I += 2)
      inflate(Self, Shared[I]);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });

  std::atomic<unsigned> Overflows{0}, SignalOverflows{0}, Released{0};
  std::atomic<unsigned> Ready{0};
  auto Body = [&](unsigned Index) {
    std::mt19937 Rng(Seed * 7919u + Index);
    // Start together, for contention.
    Ready.fetch_add(1);
    while (Ready.load() < NumThreads)
      std::this_thread::yield();
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    std::vector<Obj *> &Mine = Private[Index];
    Obj *HeldFast = Mine[0], *HeldInflated = Mine[1];
    inflate(Self, HeldInflated);
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, HeldInflated), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, HeldFast), JITLOCK_OK);

    std::vector<void *> Taken(2048), Out(2048);
    uintptr_t PrevMark = watermarkOf(Self);
    for (unsigned Round = 0; Round < Rounds; ++Round) {
      SCOPED_TRACE("thread " + std::to_string(Index) + " round " +
                   std::to_string(Round));
      jitlock_guarded_result Result{};
      Result.released = Out.data();
      Result.released_cap = Out.size();
      std::vector<void *> Expect;
      int Rc;
      bool Native = Rng() % 3 == 0;
      if (Native) {
        NativeRound N{Self, {}};
        unsigned First = Rng() % Shared.size();
        for (unsigned S = First; S < Shared.size(); S += 1 + Rng() % 3)
          N.Locks.push_back(Shared[S]);
        N.Locks.push_back(Mine[2 + Rng() % 8]);
        Rc = jitlock_rt_call_guarded(Self, &NativeRound::run, &N, &Result);
        Expect.assign(N.Locks.begin(), N.Locks.begin() + N.Taken);
        EXPECT_EQ(N.Taken, N.Locks.size());
        EXPECT_EQ(Result.overflow.from_signal, 1u);
        EXPECT_TRUE(Result.overflow.zone == JITLOCK_ZONE_RESERVED ||
                    Result.overflow.zone == JITLOCK_ZONE_YELLOW)
            << Result.overflow.zone;
        SignalOverflows.fetch_add(Rc == JITLOCK_ESTACK_OVERFLOW);
      } else {
        RoundPlan Plan;
        unsigned Depth = 1 + Rng() % 50;
        unsigned S = Rng() % Shared.size();
        // Shared objects in order (with adjacent and non-adjacent
        // re-entries), private ones in between.
        while (Depth < 1500 && Plan.Locks.size() < 40) {
          if (Rng() % 2 && S < Shared.size()) {
            Plan.Locks.push_back({Depth, Shared[S]});
            S += Rng() % 2;
          } else {
            Plan.Locks.push_back({Depth, Mine[Rng() % 10]});
          }
          Depth += 1 + Rng() % 60;
        }
        CheckedRound C;
        C.R.Self = Self;
        C.R.LockAt = &RoundPlan::at;
        C.R.Ctx = &Plan;
        C.R.Taken = Taken.data();
        C.R.TakenCap = Taken.size();
        Rc = jitlock_rt_call_guarded(Self, &CheckedRound::run, &C, &Result);
        Expect.assign(Taken.begin(), Taken.begin() + C.R.NumTaken);
        EXPECT_EQ(Result.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW));
        EXPECT_EQ(Result.overflow.from_signal, 0u);
      }
      ASSERT_EQ(Rc, JITLOCK_ESTACK_OVERFLOW) << jitlock_rt_status_name(Rc);
      Overflows.fetch_add(1);
      Released.fetch_add(unsigned(Result.released_count));
      EXPECT_EQ(Result.overflow.thread, Self);
      ASSERT_EQ(Result.released_count, Expect.size());
      EXPECT_EQ(sorted(std::vector<void *>(
                    Out.begin(), Out.begin() + Result.released_count)),
                sorted(Expect));
      // Nothing taken inside is still ours; what we had before still is.
      for (Obj *O : Shared)
        EXPECT_FALSE(jitlock_rt_holds_lock(Self, O));
      for (size_t I = 2; I < Mine.size(); ++I)
        EXPECT_EQ(ownerOf(Mine[I]), nullptr);
      EXPECT_TRUE(jitlock_rt_holds_lock(Self, HeldFast));
      EXPECT_TRUE(jitlock_rt_holds_lock(Self, HeldInflated));
      EXPECT_EQ(holdsOf(HeldInflated), 1u);
      void *LS[16];
      size_t N = jitlock_rt_lock_stack(Self, LS, 16);
      EXPECT_LE(N, 1u);
      if (N == 1)
        EXPECT_EQ(LS[0], HeldFast);

      jitlock_stack_info I = stackInfo(Self);
      EXPECT_GE(I.watermark, I.safe_limit);
      EXPECT_LE(I.watermark, PrevMark);
      PrevMark = I.watermark;
      EXPECT_EQ(I.overflows, Round + 1u);
      EXPECT_EQ(I.protected_zones & kGuardBits, kGuardBits);
      if (Round % 8 == 0)
        expectZonesProtected(I);
    }
    EXPECT_EQ(jitlock_rt_monitor_exit(Self, HeldFast), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_monitor_exit(Self, HeldInflated), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  };

  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < NumThreads; ++I)
    Threads.emplace_back([&, I] { runOnThread(kStackSize, [&] { Body(I); }); });
  for (std::thread &T : Threads)
    T.join();

  jitlock_rt_stats St{};
  jitlock_rt_get_stats(&St);
  printf("%u overflows (%u through the backstop), %u holds released; "
         "%llu contended enters, %llu parks\n",
         Overflows.load(), SignalOverflows.load(), Released.load(),
         (unsigned long long)St.contended_enters, (unsigned long long)St.parks);
  EXPECT_EQ(Overflows.load(), NumThreads * Rounds);
  for (Obj *O : Shared)
    EXPECT_EQ(ownerOf(O), nullptr);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

} // namespace
