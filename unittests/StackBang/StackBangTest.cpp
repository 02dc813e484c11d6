//===- StackBangTest.cpp - Guard zones, the watermark, overflow recovery --===//
//
// Attached code runs on threads with a known stack size. Scenarios that must
// kill the process run in a child: this binary re-executed with
// JITLOCK_STACKBANG_CHILD=<scenario>, which main() runs instead of the tests.
//
//===----------------------------------------------------------------------===//
#include "Recursion.h"
#include "StackBangTestUtil.h"

#include <csetjmp>
#include <csignal>

#include <sys/mman.h>

using namespace stackbang_test;

namespace {

uintptr_t pageSize() { return uintptr_t(sysconf(_SC_PAGESIZE)); }

//===----------------------------------------------------------------------===//
// 1. Zone invariants
//===----------------------------------------------------------------------===//

TEST_F(StackBangTest, ZonesAtAttachAndDetach) {
  runOnThread(kStackSize, [] {
    uintptr_t End, Base;
    pthreadStack(End, Base);
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    jitlock_stack_info I = stackInfo(Self);
    const uintptr_t P = pageSize();
    EXPECT_EQ(I.page_size, P);
    EXPECT_EQ(I.base, Base);
    EXPECT_EQ(I.end, End);
    EXPECT_EQ(I.red_top, End + 1 * P);
    EXPECT_EQ(I.yellow_top, I.red_top + 2 * P);
    EXPECT_EQ(I.reserved_top, I.yellow_top + 1 * P);
    EXPECT_EQ(I.safe_limit, I.reserved_top + 20 * P);
    EXPECT_EQ(I.watermark, Base) << "the first checked entry bangs once";
    EXPECT_EQ(watermarkOf(Self), Base);
    EXPECT_EQ(I.bangs, 0u);
    EXPECT_EQ(I.overflows, 0u);
    EXPECT_EQ(layout().stack_page_size, P);
    EXPECT_EQ(layout().stack_shadow_pages, 20u);
    expectZonesProtected(I);

    ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    EXPECT_EQ(watermarkOf(Self), 0u) << "detached: checks never call in";
    jitlock_stack_info J;
    EXPECT_EQ(jitlock_rt_stack_info(Self, &J), JITLOCK_ENOT_ATTACHED);
    expectZonesWritable(I.end, I.safe_limit);
    // Writable for real: these pages are far below this frame.
    for (uintptr_t A = I.end; A < I.reserved_top; A += P)
      *reinterpret_cast<volatile char *>(A) = 1;
  });
}

TEST_F(StackBangTest, ConfiguredZoneSizes) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.stack_red_pages = 2;
  Cfg.stack_yellow_pages = 3;
  Cfg.stack_reserved_pages = 4;
  Cfg.stack_shadow_pages = 7;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  EXPECT_EQ(layout().stack_shadow_pages, 20u) << "(layout cached earlier)";
  jitlock_rt_layout L{};
  jitlock_rt_get_layout(&L);
  EXPECT_EQ(L.stack_shadow_pages, 7u);
  runOnThread(kStackSize, [] {
    jitlock_thread *Self = jitlock_rt_attach();
    jitlock_stack_info I = stackInfo(Self);
    const uintptr_t P = pageSize();
    EXPECT_EQ(I.red_top, I.end + 2 * P);
    EXPECT_EQ(I.yellow_top, I.red_top + 3 * P);
    EXPECT_EQ(I.reserved_top, I.yellow_top + 4 * P);
    EXPECT_EQ(I.safe_limit, I.reserved_top + 7 * P);
    expectZonesProtected(I);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    expectZonesWritable(I.end, I.safe_limit);
  });
}

TEST_F(StackBangTest, OtherThreadsReadTheZones) {
  std::atomic<jitlock_thread *> Published{nullptr};
  std::atomic<bool> Done{false};
  jitlock_stack_info Own{};
  std::thread Reader([&] {
    while (!Published.load())
      std::this_thread::yield();
    jitlock_stack_info I{};
    EXPECT_EQ(jitlock_rt_stack_info(Published.load(), &I), JITLOCK_OK);
    EXPECT_EQ(I.base, Own.base);
    EXPECT_EQ(I.end, Own.end);
    EXPECT_EQ(I.safe_limit, Own.safe_limit);
    EXPECT_EQ(I.watermark, Own.watermark);
    EXPECT_EQ(I.protected_zones, Own.protected_zones);
    Done = true;
  });
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    Own = stackInfo(Self);
    Published = Self;
    while (!Done.load())
      std::this_thread::yield();
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  Reader.join();
  jitlock_stack_info I;
  EXPECT_EQ(jitlock_rt_stack_info(nullptr, &I), JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_stack_info(jitlock_rt_code_thread(), &I),
            JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_stack_info(jitlock_rt_code_thread(), nullptr),
            JITLOCK_EINVAL);
}

/// The values a child prints before it does something fatal, and the
/// message the parent then expects.
struct ChildExpect {
  unsigned long long Thread = 0;
  unsigned long End = 0, Base = 0;
  bool parse(const std::string &Out) {
    size_t At = Out.find("EXPECT ");
    return At != std::string::npos &&
           sscanf(Out.c_str() + At, "EXPECT thread=%llu end=%lx base=%lx",
                  &Thread, &End, &Base) == 3;
  }
  std::string bounds() const {
    char Buf[128];
    snprintf(Buf, sizeof Buf, "stack [0x%lx, 0x%lx))", End, Base);
    return Buf;
  }
  std::string thread() const { return "of thread " + std::to_string(Thread); }
};

void expectFatal(const std::string &Scenario, const std::string &Zone,
                 const std::string &Why) {
  ChildResult R = runChild(Scenario);
  SCOPED_TRACE("child scenario " + Scenario + ": " + R.describe());
  EXPECT_TRUE(R.signaled(SIGABRT)) << "expected SIGABRT, not SIGSEGV";
  ChildExpect E;
  ASSERT_TRUE(E.parse(R.Output));
  std::string Head =
      "jitlock: fatal: stack overflow into the " + Zone + " zone " + E.thread();
  EXPECT_NE(R.Output.find(Head + Why), std::string::npos) << Head + Why;
  EXPECT_NE(R.Output.find(E.bounds()), std::string::npos) << E.bounds();
  EXPECT_EQ(R.Output.find("child survived"), std::string::npos);
}

TEST_F(StackBangTest, WritingIntoTheZonesKillsTheProcess) {
  expectFatal("write-red", "red", " (fault at 0x");
  expectFatal("write-yellow", "yellow",
              ": no guarded call to return to (fault at 0x");
  expectFatal("write-reserved", "reserved",
              ": no guarded call to return to (fault at 0x");
}

//===----------------------------------------------------------------------===//
// 2. The watermark
//===----------------------------------------------------------------------===//

bool resident(uintptr_t Lo, uintptr_t Hi) {
  const uintptr_t P = pageSize();
  Lo &= ~(P - 1);
  std::vector<unsigned char> Vec((Hi - Lo + P - 1) / P);
  if (mincore(reinterpret_cast<void *>(Lo), Hi - Lo, Vec.data()) != 0)
    return false;
  for (unsigned char C : Vec)
    if (!(C & 1))
      return false;
  return true;
}

TEST_F(StackBangTest, WatermarkOnlyGoesDown) {
  runOnThread(kStackSize, [] {
    jitlock_thread *Self = jitlock_rt_attach();
    jitlock_stack_info I = stackInfo(Self);
    const uintptr_t P = pageSize();
    const uintptr_t Shadow = I.safe_limit - I.reserved_top;

    // Above the watermark: nothing happens.
    jitlock_rt_stack_bang(Self, I.base + P);
    EXPECT_EQ(watermarkOf(Self), I.base);
    EXPECT_EQ(stackInfo(Self).bangs, 0u);

    uintptr_t Prev = watermarkOf(Self);
    uint64_t Bangs = 0;
    // From a few pages below this frame down to just above safe_limit, in
    // steps that land on and off page boundaries.
    uintptr_t Start = (frameAddress() & ~(P - 1)) - 4 * P;
    for (uintptr_t Sp = Start; Sp > I.safe_limit; Sp -= 3 * P + 8 * (Sp % 5)) {
      jitlock_rt_stack_bang(Self, Sp);
      ++Bangs;
      uintptr_t W = watermarkOf(Self);
      EXPECT_LT(W, Sp) << "an entry at the same sp must skip next time";
      EXPECT_LE(W, Prev) << "the watermark never rises";
      EXPECT_GE(W, I.safe_limit);
      EXPECT_EQ(W % P, 0u);
      EXPECT_TRUE(W == I.safe_limit || W + P >= Sp)
          << "lowered to the page below sp_needed";
      EXPECT_TRUE(resident(Sp - Shadow, Sp)) << "the shadow pages are touched";
      // The same sp, or any sp above the mark, changes nothing now.
      jitlock_rt_stack_bang(Self, Sp);
      jitlock_rt_stack_bang(Self, W + 1);
      jitlock_rt_stack_bang(Self, Prev);
      EXPECT_EQ(watermarkOf(Self), W);
      EXPECT_EQ(stackInfo(Self).bangs, Bangs);
      Prev = W;
    }
    // Exactly on a page boundary.
    uintptr_t Aligned = (Prev & ~(P - 1));
    if (Aligned > I.safe_limit) {
      jitlock_rt_stack_bang(Self, Aligned);
      ++Bangs;
      EXPECT_EQ(watermarkOf(Self), std::max(I.safe_limit, Aligned - P));
    }
    EXPECT_GE(watermarkOf(Self), I.safe_limit);
    EXPECT_EQ(stackInfo(Self).bangs, Bangs);
    EXPECT_EQ(stackInfo(Self).overflows, 0u);
    expectZonesProtected(stackInfo(Self));
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, BangWithoutAThreadDoesNothing) {
  jitlock_rt_stack_bang(nullptr, 0);
  jitlock_rt_stack_bang(nullptr, frameAddress());
  // The calling thread is not attached.
  jitlock_rt_stack_bang(jitlock_rt_code_thread(), 1);
  EXPECT_EQ(watermarkOf(jitlock_rt_code_thread()), 0u);
}

//===----------------------------------------------------------------------===//
// 3. Overflow caught by the bang check, recovered, 100 times in a row
//===----------------------------------------------------------------------===//

/// A guarded checked recursion and its result; on the heap, since the
/// buffers would take a good part of a test thread's stack.
struct Guarded {
  CheckedRecursion R;
  std::vector<void *> Taken = std::vector<void *>(4096);
  std::vector<void *> Released = std::vector<void *>(4096);
  jitlock_guarded_result Result{};

  explicit Guarded(jitlock_thread *Self) {
    R.Self = Self;
    R.Taken = Taken.data();
    R.TakenCap = Taken.size();
  }
  static void run(void *P) {
    auto *G = static_cast<Guarded *>(P);
    checkedRecurse(G->R, 0);
  }
  int call(size_t Cap = 4096) {
    R.NumTaken = 0;
    R.Deepest = 0;
    Result = jitlock_guarded_result{};
    Result.released = Released.data();
    Result.released_cap = Cap;
    return jitlock_rt_call_guarded(R.Self, &Guarded::run, this, &Result);
  }
  std::vector<void *> taken() const {
    return std::vector<void *>(Taken.begin(), Taken.begin() + R.NumTaken);
  }
  std::vector<void *> released() const {
    return std::vector<void *>(
        Released.begin(),
        Released.begin() + std::min<size_t>(Result.released_count, 4096));
  }
};

TEST_F(StackBangTest, CheckedRecursionWithoutOverflowReturns) {
  std::vector<Obj *> Objs = newObjs(3);
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    auto G = std::make_unique<Guarded>(Self);
    G->R.MaxDepth = 100;
    G->R.LockAt = [](void *Ctx, unsigned Depth) -> void * {
      auto &O = *static_cast<std::vector<Obj *> *>(Ctx);
      return Depth % 10 ? nullptr : O[Depth / 10 % 3];
    };
    G->R.Ctx = &Objs;
    EXPECT_EQ(G->call(), JITLOCK_OK);
    EXPECT_EQ(G->R.Deepest, 100u);
    EXPECT_EQ(G->Result.released_count, 0u);
    EXPECT_GT(stackInfo(Self).bangs, 0u) << "the first entry bangs";
    EXPECT_EQ(stackInfo(Self).overflows, 0u);
    for (Obj *O : Objs)
      EXPECT_EQ(ownerOf(O), nullptr);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, ReleasesInnermostFirst) {
  std::vector<Obj *> Objs = newObjs(3);
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    auto G = std::make_unique<Guarded>(Self);
    // Levels 1, 2 and 3 lock A, B, C; then the recursion overflows.
    G->R.LockAt = [](void *Ctx, unsigned Depth) -> void * {
      auto &O = *static_cast<std::vector<Obj *> *>(Ctx);
      return Depth >= 1 && Depth <= 3 ? O[Depth - 1] : nullptr;
    };
    G->R.Ctx = &Objs;
    ASSERT_EQ(G->call(), JITLOCK_ESTACK_OVERFLOW);
    std::vector<void *> Expect = {Objs[2], Objs[1], Objs[0]};
    EXPECT_EQ(G->released(), Expect);
    EXPECT_EQ(G->Result.released_count, 3u);
    // A buffer too small still counts every hold.
    ASSERT_EQ(G->call(/*Cap=*/1), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(G->Result.released_count, 3u);
    EXPECT_EQ(G->Released[0], Objs[2]);
    // And a null result is fine.
    G->R.NumTaken = 0;
    EXPECT_EQ(jitlock_rt_call_guarded(Self, &Guarded::run, G.get(), nullptr),
              JITLOCK_ESTACK_OVERFLOW);
    for (Obj *O : Objs)
      EXPECT_EQ(ownerOf(O), nullptr);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

/// Which lock a level takes in the 100-round test.
struct LockPlan {
  Obj *HeldFast;     // held fast-locked before the call; re-entered inside
  Obj *HeldInflated; // held through a monitor before the call
  Obj *Idle;         // inflated, unowned before the call
  std::vector<Obj *> Fresh;
  unsigned Every = 37;

  static void *at(void *Ctx, unsigned Depth) {
    auto *P = static_cast<LockPlan *>(Ctx);
    if (Depth == 0 || Depth % P->Every)
      return nullptr;
    unsigned K = Depth / P->Every;
    switch (K % 7) {
    case 3:
      return P->HeldFast; // non-adjacent re-entry: inflates it
    case 4:
      return P->HeldInflated;
    case 5:
      return P->Idle;
    default:
      return P->Fresh[K % P->Fresh.size()];
    }
  }
};

jitlock_rt_stats stats() {
  jitlock_rt_stats S{};
  jitlock_rt_get_stats(&S);
  return S;
}

TEST_F(StackBangTest, OverflowAtTheBangCheckRecoversAHundredTimes) {
  LockPlan Plan;
  Plan.HeldFast = newObj();
  Plan.HeldInflated = newObj();
  Plan.Idle = newObj();
  std::vector<Obj *> AllFresh;
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    inflate(Self, Plan.Idle);
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, Plan.HeldInflated), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_wait_timed(Self, Plan.HeldInflated, 0),
              JITLOCK_ETIMEDOUT);
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, Plan.HeldFast), JITLOCK_OK);

    auto G = std::make_unique<Guarded>(Self);
    G->R.LockAt = &LockPlan::at;
    G->R.Ctx = &Plan;
    uintptr_t PrevMark = stackInfo(Self).watermark;
    uint64_t PrevBangs = 0;
    for (int Round = 0; Round < 100; ++Round) {
      SCOPED_TRACE("round " + std::to_string(Round));
      // Fresh objects each round, so that every round takes fast locks
      // (and inflates some of them) inside the call.
      Plan.Fresh = newObjs(12);
      AllFresh.insert(AllFresh.end(), Plan.Fresh.begin(), Plan.Fresh.end());
      jitlock_rt_stats S0 = stats();
      int Rc = G->call();
      jitlock_rt_stats S1 = stats();
      ASSERT_EQ(Rc, JITLOCK_ESTACK_OVERFLOW) << jitlock_rt_status_name(Rc);
      EXPECT_GT(S1.fast_locks, S0.fast_locks) << "fast-locked holds inside";
      EXPECT_GT(S1.inflations, S0.inflations) << "inflated holds inside";
      EXPECT_GT(S1.monitor_enters, S0.monitor_enters);
      const jitlock_stack_overflow &O = G->Result.overflow;
      EXPECT_EQ(O.zone, uint32_t(JITLOCK_ZONE_SHADOW));
      EXPECT_EQ(O.from_signal, 0u);
      EXPECT_EQ(O.thread, Self);
      EXPECT_EQ(O.fault_addr, 0u);
      EXPECT_LE(O.sp, O.stack.safe_limit);
      EXPECT_EQ(O.stack.overflows, uint64_t(Round + 1));
      EXPECT_GT(G->R.Deepest, 100u);
      EXPECT_GT(G->R.NumTaken, 8u) << "more holds than the lock stack holds";

      // Exactly the holds taken inside were released.
      EXPECT_EQ(G->Result.released_count, G->R.NumTaken);
      EXPECT_EQ(sorted(G->released()), sorted(G->taken()));
      // Holds from before the call are kept (the re-entry inflated the fast
      // one; still one hold each).
      EXPECT_EQ(ownerOf(Plan.HeldFast), Self);
      EXPECT_EQ(holdsOf(Plan.HeldFast), 1u);
      EXPECT_EQ(ownerOf(Plan.HeldInflated), Self);
      EXPECT_EQ(holdsOf(Plan.HeldInflated), 1u);
      EXPECT_EQ(ownerOf(Plan.Idle), nullptr);
      for (Obj *F : Plan.Fresh)
        EXPECT_EQ(ownerOf(F), nullptr);
      // The lock stack holds at most the pre-call fast entry.
      void *LS[16];
      size_t Depth = jitlock_rt_lock_stack(Self, LS, 16);
      EXPECT_LE(Depth, 1u);
      if (Depth == 1)
        EXPECT_EQ(LS[0], Plan.HeldFast);

      jitlock_stack_info I = stackInfo(Self);
      EXPECT_GE(I.watermark, I.safe_limit);
      EXPECT_LE(I.watermark, PrevMark);
      EXPECT_EQ(I.overflows, uint64_t(Round + 1));
      if (Round > 0)
        EXPECT_LE(I.bangs - PrevBangs, 3u)
            << "with the watermark low, hardly any entry bangs";
      PrevMark = I.watermark;
      PrevBangs = I.bangs;
      expectZonesProtected(I);
    }

    ASSERT_EQ(jitlock_rt_monitor_exit(Self, Plan.HeldFast), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_monitor_exit(Self, Plan.HeldInflated), JITLOCK_OK);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  // Another thread can take every object.
  runOnThread(0, [&] {
    jitlock_thread *Other = jitlock_rt_attach();
    std::vector<Obj *> All = AllFresh;
    All.insert(All.end(), {Plan.HeldFast, Plan.HeldInflated, Plan.Idle});
    for (Obj *O : All) {
      ASSERT_EQ(ownerOf(O), nullptr);
      EXPECT_EQ(jitlock_rt_monitor_enter(Other, O), JITLOCK_OK);
      EXPECT_EQ(jitlock_rt_monitor_exit(Other, O), JITLOCK_OK);
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

struct Nested {
  jitlock_thread *Self;
  Obj *A, *B;
  int InnerRc = -1;
  jitlock_guarded_result Inner{};
  void *InnerReleased[4];
  static void inner(void *P) {
    auto *N = static_cast<Nested *>(P);
    jitlock_rt_monitor_enter(N->Self, N->B);
    CheckedRecursion R;
    R.Self = N->Self;
    checkedRecurse(R, 0);
  }
  static void outer(void *P) {
    auto *N = static_cast<Nested *>(P);
    jitlock_rt_monitor_enter(N->Self, N->A);
    N->Inner.released = N->InnerReleased;
    N->Inner.released_cap = 4;
    N->InnerRc = jitlock_rt_call_guarded(N->Self, &inner, N, &N->Inner);
    // Back in the outer call: A is still held; now overflow here too.
    if (jitlock_rt_holds_lock(N->Self, N->A) &&
        !jitlock_rt_holds_lock(N->Self, N->B)) {
      CheckedRecursion R;
      R.Self = N->Self;
      checkedRecurse(R, 0);
    }
  }
};

TEST_F(StackBangTest, NestedGuardedCallsReturnToTheInnermost) {
  Obj *A = newObj(), *B = newObj();
  runOnThread(kStackSize, [&] {
    Nested N{jitlock_rt_attach(), A, B, -1, {}, {}};
    void *Released[4];
    jitlock_guarded_result Outer{};
    Outer.released = Released;
    Outer.released_cap = 4;
    EXPECT_EQ(jitlock_rt_call_guarded(N.Self, &Nested::outer, &N, &Outer),
              JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(N.InnerRc, JITLOCK_ESTACK_OVERFLOW);
    ASSERT_EQ(N.Inner.released_count, 1u);
    EXPECT_EQ(N.InnerReleased[0], B);
    ASSERT_EQ(Outer.released_count, 1u);
    EXPECT_EQ(Released[0], A);
    EXPECT_EQ(ownerOf(A), nullptr);
    EXPECT_EQ(ownerOf(B), nullptr);
    EXPECT_EQ(stackInfo(N.Self).overflows, 2u);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

//===----------------------------------------------------------------------===//
// 4. The SIGSEGV backstop
//===----------------------------------------------------------------------===//

struct NativeCall {
  jitlock_thread *Self;
  Obj *Fast, *Inflated;
  static void run(void *P) {
    auto *N = static_cast<NativeCall *>(P);
    jitlock_rt_monitor_enter(N->Self, N->Fast);
    jitlock_rt_monitor_enter(N->Self, N->Inflated);
    nativeRecurse(0, ~0u);
  }
};

bool segvBlocked() {
  sigset_t Set;
  pthread_sigmask(SIG_BLOCK, nullptr, &Set);
  return sigismember(&Set, SIGSEGV);
}

TEST_F(StackBangTest, BackstopRecoversNativeOverflow) {
  Obj *Fast = newObj(), *Inflated = newObj();
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    inflate(Self, Inflated);
    NativeCall N{Self, Fast, Inflated};
    for (int Round = 0; Round < 20; ++Round) {
      SCOPED_TRACE("round " + std::to_string(Round));
      void *Released[8];
      jitlock_guarded_result R{};
      R.released = Released;
      R.released_cap = 8;
      ASSERT_EQ(jitlock_rt_call_guarded(Self, &NativeCall::run, &N, &R),
                JITLOCK_ESTACK_OVERFLOW);
      const jitlock_stack_overflow &O = R.overflow;
      EXPECT_EQ(O.from_signal, 1u);
      EXPECT_EQ(O.thread, Self);
      // Frames smaller than a page reach the reserved zone first.
      EXPECT_EQ(O.zone, uint32_t(JITLOCK_ZONE_RESERVED));
      EXPECT_GE(O.fault_addr, O.stack.yellow_top);
      EXPECT_LT(O.fault_addr, O.stack.reserved_top);
      EXPECT_LE(O.sp, O.stack.safe_limit);
      EXPECT_EQ(O.stack.protected_zones & zoneBit(JITLOCK_ZONE_RESERVED), 0u)
          << "unprotected while the handler runs";
      // The lock stack entry first, then the monitor.
      ASSERT_EQ(R.released_count, 2u);
      EXPECT_EQ(Released[0], Fast);
      EXPECT_EQ(Released[1], Inflated);
      EXPECT_EQ(ownerOf(Fast), nullptr);
      EXPECT_EQ(ownerOf(Inflated), nullptr);
      EXPECT_FALSE(segvBlocked());
      jitlock_stack_info I = stackInfo(Self);
      EXPECT_EQ(I.overflows, uint64_t(Round + 1));
      expectZonesProtected(I);
    }
    // The bang check still works on the same thread afterwards.
    auto G = std::make_unique<Guarded>(Self);
    EXPECT_EQ(G->call(), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(G->Result.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW));
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, BackstopRecoversAFaultInTheYellowZone) {
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    static jitlock_stack_info I;
    I = stackInfo(Self);
    jitlock_guarded_result R{};
    ASSERT_EQ(jitlock_rt_call_guarded(
                  Self,
                  [](void *) {
                    *reinterpret_cast<volatile char *>(I.red_top + 100) = 1;
                  },
                  nullptr, &R),
              JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(R.overflow.zone, uint32_t(JITLOCK_ZONE_YELLOW));
    EXPECT_EQ(R.overflow.fault_addr, I.red_top + 100);
    EXPECT_EQ(R.overflow.from_signal, 1u);
    expectZonesProtected(stackInfo(Self));
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, FatalFaultsKillTheProcess) {
  // A real overflow (not a stray write) with no guarded call.
  expectFatal("native-unguarded", "reserved",
              ": no guarded call to return to (fault at 0x");
  expectFatal("bang-unguarded", "shadow",
              ": no guarded call to return to (sp 0x");
  expectFatal("handler-returns", "shadow",
              ": the overflow handler returned (sp 0x");
}

TEST_F(StackBangTest, OverflowInAHandshakeOperationIsFatal) {
  // Its requester waits for it to complete, holding the operation lock:
  // recovery cannot give either back, and says so.
  ChildResult R = runChild("handshake-op-overflow");
  SCOPED_TRACE(R.describe());
  EXPECT_TRUE(R.signaled(SIGABRT));
  EXPECT_NE(R.Output.find("jitlock: fatal: a stack overflow abandoned a "
                          "handshake operation, which cannot be completed"),
            std::string::npos);
  EXPECT_EQ(R.Output.find("child survived"), std::string::npos);
}

TEST_F(StackBangTest, OverflowInADeadlockCallbackRecovers) {
  // Two threads deadlock for good, so the scenario runs in a child, which
  // exits without cleaning up.
  ChildResult R = runChild("deadlock-callback-overflow");
  SCOPED_TRACE(R.describe());
  EXPECT_TRUE(WIFEXITED(R.Status) && WEXITSTATUS(R.Status) == 0);
  EXPECT_NE(R.Output.find("deadlock found again after the overflow"),
            std::string::npos);
}

TEST_F(StackBangTest, OtherFaultsGoToThePreviousHandler) {
  ChildResult R = runChild("wild-write");
  SCOPED_TRACE(R.describe());
#if defined(STACKBANG_ASAN)
  // The previous handler is ASan's, which reports the fault.
  EXPECT_NE(R.Output.find("AddressSanitizer: SEGV"), std::string::npos);
#elif defined(STACKBANG_TSAN)
  // We put SIG_DFL back; TSan reports the re-executed fault itself.
  EXPECT_NE(R.Output.find("ThreadSanitizer: SEGV"), std::string::npos);
#else
  EXPECT_TRUE(R.signaled(SIGSEGV)) << "the default action, as without us";
#endif
  EXPECT_EQ(R.Output.find("jitlock: fatal"), std::string::npos);
  EXPECT_NE(R.Output.find("backstop installed"), std::string::npos);

  // A handler the program installed before attaching is called.
  R = runChild("chained-handler");
  SCOPED_TRACE(R.describe());
  EXPECT_TRUE(WIFEXITED(R.Status) && WEXITSTATUS(R.Status) == 42);
  EXPECT_NE(R.Output.find("previous handler called"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// 6. Misuse, configuration, handlers
//===----------------------------------------------------------------------===//

TEST_F(StackBangTest, GuardedCallNeedsTheCallersAttachedThread) {
  static bool Called;
  Called = false;
  auto Fn = [](void *) { Called = true; };
  jitlock_guarded_result R{};
  EXPECT_EQ(jitlock_rt_call_guarded(jitlock_rt_code_thread(), Fn, nullptr, &R),
            JITLOCK_ENOT_ATTACHED);
  EXPECT_EQ(jitlock_rt_call_guarded(nullptr, Fn, nullptr, &R),
            JITLOCK_ENOT_ATTACHED);
  jitlock_thread *OtherSelf = nullptr;
  runOnThread(0, [&] {
    OtherSelf = jitlock_rt_attach();
    EXPECT_EQ(jitlock_rt_call_guarded(OtherSelf, nullptr, nullptr, &R),
              JITLOCK_EINVAL);
    EXPECT_EQ(jitlock_rt_call_guarded(OtherSelf, Fn, nullptr, &R), JITLOCK_OK);
    EXPECT_TRUE(Called);
    Called = false;
    // Keep it attached while the main thread tries to use it.
    jitlock_thread *Main = nullptr;
    std::thread([&] {
      Main = jitlock_rt_attach();
      EXPECT_EQ(jitlock_rt_call_guarded(OtherSelf, Fn, nullptr, &R),
                JITLOCK_ENOT_ATTACHED);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    }).join();
    EXPECT_NE(Main, nullptr);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  EXPECT_FALSE(Called);
}

TEST_F(StackBangTest, BadZoneSizesAreRejected) {
  jitlock_rt_config Def;
  jitlock_rt_default_config(&Def);
  EXPECT_EQ(Def.stack_red_pages, 1u);
  EXPECT_EQ(Def.stack_yellow_pages, 2u);
  EXPECT_EQ(Def.stack_reserved_pages, 1u);
  EXPECT_EQ(Def.stack_shadow_pages, 20u);
  EXPECT_NE(Def.stack_guards, 0u);
  for (int Field = 0; Field < 7; ++Field) {
    jitlock_rt_config Cfg = Def;
    switch (Field) {
    case 0:
      Cfg.stack_red_pages = 0;
      break;
    case 1:
      Cfg.stack_yellow_pages = 0;
      break;
    case 2:
      Cfg.stack_reserved_pages = 0;
      break;
    case 3:
      Cfg.stack_red_pages = 1025;
      break;
    case 4:
      Cfg.stack_yellow_pages = 1u << 31;
      break;
    case 5:
      Cfg.stack_reserved_pages = 5000;
      break;
    case 6:
      Cfg.stack_shadow_pages = 1025;
      break;
    }
    EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_EINVAL) << "field " << Field;
  }
  jitlock_rt_config Cfg = Def;
  Cfg.stack_shadow_pages = 0;
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK) << "no shadow zone is ok";
}

struct Recorded {
  int Calls = 0;
  void *Ctx = nullptr;
  jitlock_stack_overflow Info{};
  sigjmp_buf Back;
};
Recorded Rec;

void recordAndJump(void *Ctx, const jitlock_stack_overflow *Info) {
  ++Rec.Calls;
  Rec.Ctx = Ctx;
  Rec.Info = *Info;
  siglongjmp(Rec.Back, 1);
}

TEST_F(StackBangTest, CustomOverflowHandler) {
  int Tag;
  jitlock_rt_set_overflow_handler(&recordAndJump, &Tag);
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    Rec = Recorded{};
    static bool Resumed;
    Resumed = false;
    // The handler jumps back into fn, which then returns normally.
    auto Fn = [](void *P) {
      auto *Self = static_cast<jitlock_thread *>(P);
      if (sigsetjmp(Rec.Back, 0) == 0) {
        CheckedRecursion R;
        R.Self = Self;
        checkedRecurse(R, 0);
      } else {
        Resumed = true;
      }
    };
    jitlock_guarded_result R{};
    EXPECT_EQ(jitlock_rt_call_guarded(Self, Fn, Self, &R), JITLOCK_OK);
    EXPECT_TRUE(Resumed);
    EXPECT_EQ(Rec.Calls, 1);
    EXPECT_EQ(Rec.Ctx, &Tag);
    EXPECT_EQ(Rec.Info.thread, Self);
    EXPECT_EQ(Rec.Info.zone, uint32_t(JITLOCK_ZONE_SHADOW));
    EXPECT_EQ(Rec.Info.from_signal, 0u);
    EXPECT_LE(Rec.Info.sp, Rec.Info.stack.safe_limit);
    EXPECT_GT(Rec.Info.sp, Rec.Info.stack.reserved_top);
    jitlock_stack_info I = stackInfo(Self);
    EXPECT_EQ(Rec.Info.stack.base, I.base);
    EXPECT_EQ(Rec.Info.stack.safe_limit, I.safe_limit);
    EXPECT_EQ(Rec.Info.stack.overflows, 1u);

    // From the backstop, on the alternate stack: the handler jumps out of
    // the signal handler itself.
    Rec = Recorded{};
    if (sigsetjmp(Rec.Back, 1) == 0)
      nativeRecurse(0, ~0u);
    EXPECT_EQ(Rec.Calls, 1);
    EXPECT_EQ(Rec.Info.from_signal, 1u);
    EXPECT_EQ(Rec.Info.zone, uint32_t(JITLOCK_ZONE_RESERVED));
    EXPECT_EQ(stackInfo(Self).protected_zones & zoneBit(JITLOCK_ZONE_RESERVED),
              0u)
        << "left unprotected by a handler that does not recover";
    // The next guarded call protects it again.
    EXPECT_EQ(jitlock_rt_call_guarded(
                  Self, [](void *) {}, nullptr, nullptr),
              JITLOCK_OK);
    expectZonesProtected(stackInfo(Self));
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
  jitlock_rt_set_overflow_handler(nullptr, nullptr);
  // The default again.
  runOnThread(kStackSize, [&] {
    auto G = std::make_unique<Guarded>(jitlock_rt_attach());
    EXPECT_EQ(G->call(), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(Rec.Calls, 1);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, UnguardedZonesStillCheck) {
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.stack_guards = 0;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    jitlock_stack_info I = stackInfo(Self);
    EXPECT_EQ(I.protected_zones, 0u);
    EXPECT_EQ(I.red_top, I.end + pageSize());
    expectZonesWritable(I.end, I.safe_limit);
    auto G = std::make_unique<Guarded>(Self);
    EXPECT_EQ(G->call(), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(G->Result.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW));
    EXPECT_GE(watermarkOf(Self), I.safe_limit);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, StackTooSmallForTheZones) {
  // Zones bigger than the stack (a tiny pthread stack would do too, but the
  // sanitizers enlarge those).
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.stack_yellow_pages = 1024;
  Cfg.stack_shadow_pages = 1024;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  runOnThread(kStackSize, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr) << "attach succeeds anyway";
    jitlock_stack_info I = stackInfo(Self);
    EXPECT_EQ(I.protected_zones, 0u);
    EXPECT_EQ(I.safe_limit, I.base) << "clamped to the stack";
    EXPECT_EQ(I.watermark, I.base);
    expectZonesWritable(I.end, I.base);
    // Every checked entry overflows, recoverably.
    auto G = std::make_unique<Guarded>(Self);
    EXPECT_EQ(G->call(), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(G->R.Deepest, 0u);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackBangTest, PrimordialThreadKeepsLogicalZones) {
  uintptr_t End, Base;
  pthreadStack(End, Base);
  jitlock_thread *Self = jitlock_rt_attach();
  ASSERT_NE(Self, nullptr);
  jitlock_stack_info I = stackInfo(Self);
  EXPECT_EQ(I.base, Base);
  EXPECT_EQ(I.end, End);
  EXPECT_EQ(I.watermark, Base);
  printf("main thread: stack [%#lx, %#lx), protected zones %#x\n",
         (unsigned long)End, (unsigned long)Base, I.protected_zones);
  if (I.protected_zones == 0)
    EXPECT_FALSE(rangeHasPerms(I.end, I.reserved_top, "---"));
  else
    expectZonesProtected(I);
  // A normal entry bangs and lowers the mark; one without room overflows.
  uintptr_t Sp = frameAddress() - 1024;
  jitlock_rt_stack_bang(Self, Sp);
  EXPECT_LT(watermarkOf(Self), Sp);
  jitlock_guarded_result R{};
  static jitlock_stack_info Static;
  Static = I;
  EXPECT_EQ(jitlock_rt_call_guarded(
                Self,
                [](void *P) {
                  jitlock_rt_stack_bang(static_cast<jitlock_thread *>(P),
                                        Static.safe_limit);
                },
                Self, &R),
            JITLOCK_ESTACK_OVERFLOW);
  EXPECT_EQ(R.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW));
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

// What a thread that exits attached must give back, checked on each thread
// as soon as it is joined (before anything can map over what it freed): its
// zones writable again while glibc keeps its stack for a later thread, and
// its alternate signal stack unmapped. And each new thread, which glibc
// usually gives the stack of the one before, starts with a writable stack.
//
// Not a count of the process's mappings: the sanitizers map shadow and
// allocator memory of their own as threads come and go (about 20 mappings
// for the first thread under TSan, whatever the thread count), so no slack
// is both safe and small enough to see a leak.
TEST_F(StackBangTest, ThreadExitUnprotectsForTheNextThread) {
  const uintptr_t P = pageSize();
  uintptr_t FirstEnd = 0;
  unsigned Reused = 0, Cached = 0;
  for (int I = 0; I < 20; ++I) {
    SCOPED_TRACE("thread " + std::to_string(I));
    jitlock_stack_info Zones{};
    uintptr_t AltLo = 0, AltHi = 0;
    runOnThread(kStackSize, [&] {
      uintptr_t End, Base;
      pthreadStack(End, Base);
      // Whatever thread had this stack before, nothing in it is protected.
      expectZonesWritable(End, Base);
      Reused += End == FirstEnd;
      if (!FirstEnd)
        FirstEnd = End;
      jitlock_thread *Self = jitlock_rt_attach();
      Zones = stackInfo(Self);
      expectZonesProtected(Zones);
      stack_t Alt{};
      ASSERT_EQ(sigaltstack(nullptr, &Alt), 0);
      ASSERT_EQ(Alt.ss_flags & SS_DISABLE, 0);
      AltLo = uintptr_t(Alt.ss_sp);
      AltHi = AltLo + Alt.ss_size;
      // The runtime's, with its guard page: what a leak would leave behind.
      EXPECT_TRUE(rangeHasPerms(AltLo - P, AltLo, "---"))
          << describeRange(AltLo - P, AltHi);
      EXPECT_TRUE(rangeHasPerms(AltLo, AltHi, "rw"))
          << describeRange(AltLo - P, AltHi);
      // Exits attached: the exit hook detaches it.
    });
    ASSERT_NE(Zones.reserved_top, 0u);
    ASSERT_GT(AltHi, AltLo);
    // Still mapped (glibc caches the stacks of joined threads, up to a
    // limit, and unmaps the rest): the zones must be writable.
    if (rangeHasPerms(Zones.reserved_top, Zones.base, "rw")) {
      ++Cached;
      expectZonesWritable(Zones.end, Zones.reserved_top);
    }
    // Its guard page still there, and above it the stack or, under ASan,
    // nothing (ASan's thread exit unmaps whatever alternate stack is
    // installed, without our guard page). A mapping made since in the hole
    // that our munmap left would start at its top, and cover the guard page
    // only by covering the whole hole.
    EXPECT_FALSE(rangeHasPerms(AltLo - P, AltLo, "---") &&
                 mappingsInRangeHavePerms(AltLo, AltHi, "rw"))
        << "the alternate signal stack outlived its thread:\n"
        << describeRange(AltLo - P, AltHi);
  }
  printf("glibc reused the first stack %u times, kept %u stacks cached\n",
         Reused, Cached);
}

TEST_F(StackBangTest, DetachRestoresTheAlternateSignalStack) {
  runOnThread(kStackSize, [&] {
    stack_t Before{};
    ASSERT_EQ(sigaltstack(nullptr, &Before), 0);
    jitlock_rt_attach();
    stack_t During{};
    ASSERT_EQ(sigaltstack(nullptr, &During), 0);
    EXPECT_EQ(During.ss_flags & SS_DISABLE, 0);
    EXPECT_GE(During.ss_size, 64u * 1024);
    EXPECT_NE(During.ss_sp, Before.ss_sp);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    stack_t After{};
    ASSERT_EQ(sigaltstack(nullptr, &After), 0);
    EXPECT_EQ(After.ss_flags, Before.ss_flags);
    if (!(Before.ss_flags & SS_DISABLE)) {
      EXPECT_EQ(After.ss_sp, Before.ss_sp);
      EXPECT_EQ(After.ss_size, Before.ss_size);
    }
  });
}

TEST_F(StackBangTest, LayoutPrintsTheStackFields) {
  FILE *F = tmpfile();
  ASSERT_NE(F, nullptr);
  jitlock_rt_print_layout(F);
  fflush(F);
  rewind(F);
  std::string Text;
  char Buf[512];
  while (fgets(Buf, sizeof Buf, F))
    Text += Buf;
  fclose(F);
  for (const char *Field : {"StackWatermark", "Stack.Base", "Stack.SafeLimit",
                            "Stack.ProtectedZones", "Stack.Innermost"})
    EXPECT_NE(Text.find(Field), std::string::npos) << Field << "\n" << Text;
}

} // namespace

//===----------------------------------------------------------------------===//
// Child scenarios: each ends the process; surviving is a failure.
//===----------------------------------------------------------------------===//

namespace {

std::string Scenario;

void announce(jitlock_thread *Self, const jitlock_stack_info &I) {
  dprintf(1, "EXPECT thread=%llu end=%lx base=%lx\n",
          (unsigned long long)jitlock_rt_thread_id(Self), (unsigned long)I.end,
          (unsigned long)I.base);
}

void returningHandler(void *, const jitlock_stack_overflow *) {}

void previousHandler(int) {
  static const char Msg[] = "previous handler called\n";
  if (write(1, Msg, sizeof Msg - 1) < 0)
    _exit(43);
  _exit(42);
}

/// Deadlocks two threads, then overflows inside the deadlock finder's
/// callback; the finder must work again afterwards.
void deadlockCallbackOverflow(jitlock_thread *Self) {
  alarm(30); // a lock the overflow left held would hang the child
  static Obj X, Y;
  static std::atomic<int> Holding{0};
  for (int I = 0; I < 2; ++I)
    std::thread([I] {
      jitlock_thread *T = jitlock_rt_attach();
      Obj *First = I ? &Y : &X, *Second = I ? &X : &Y;
      jitlock_rt_monitor_enter(T, First);
      Holding.fetch_add(1);
      while (Holding.load() != 2)
        std::this_thread::yield();
      jitlock_rt_monitor_enter(T, Second); // never returns
    }).detach();
  for (int Try = 0; jitlock_rt_find_deadlocks(nullptr, nullptr) != 1; ++Try) {
    if (Try == 30000) {
      dprintf(1, "no deadlock formed\n");
      _exit(4);
    }
    usleep(1000);
  }
  jitlock_guarded_result R{};
  int Rc = jitlock_rt_call_guarded(
      Self,
      [](void *) {
        jitlock_rt_find_deadlocks([](void *, size_t, jitlock_thread *const *,
                                     void *const *) { nativeRecurse(0, ~0u); },
                                  nullptr);
      },
      nullptr, &R);
  if (Rc != JITLOCK_ESTACK_OVERFLOW) {
    dprintf(1, "guarded call returned %d\n", Rc);
    _exit(5);
  }
  if (jitlock_rt_find_deadlocks(nullptr, nullptr) == 1)
    dprintf(1, "deadlock found again after the overflow\n");
  _exit(0);
}

void childThread() {
  jitlock_thread *Self = jitlock_rt_attach();
  jitlock_stack_info I{};
  jitlock_rt_stack_info(Self, &I);
  announce(Self, I);
  if (Scenario == "write-red")
    *reinterpret_cast<volatile char *>(I.end + 64) = 1;
  else if (Scenario == "write-yellow")
    *reinterpret_cast<volatile char *>(I.red_top + 64) = 1;
  else if (Scenario == "write-reserved")
    *reinterpret_cast<volatile char *>(I.yellow_top + 64) = 1;
  else if (Scenario == "native-unguarded")
    nativeRecurse(0, ~0u);
  else if (Scenario == "bang-unguarded") {
    CheckedRecursion R;
    R.Self = Self;
    checkedRecurse(R, 0);
  } else if (Scenario == "handler-returns") {
    jitlock_rt_set_overflow_handler(&returningHandler, nullptr);
    jitlock_rt_call_guarded(
        Self,
        [](void *P) {
          CheckedRecursion R;
          R.Self = static_cast<jitlock_thread *>(P);
          checkedRecurse(R, 0);
        },
        Self, nullptr);
  } else if (Scenario == "handshake-op-overflow") {
    jitlock_rt_call_guarded(
        Self,
        [](void *P) {
          jitlock_rt_handshake(
              static_cast<jitlock_thread *>(P),
              [](void *, jitlock_thread *) { nativeRecurse(0, ~0u); }, nullptr);
        },
        Self, nullptr);
  } else if (Scenario == "deadlock-callback-overflow") {
    deadlockCallbackOverflow(Self);
  } else if (Scenario == "wild-write" || Scenario == "chained-handler") {
    if (I.protected_zones)
      dprintf(1, "backstop installed\n");
    // Not null, which UBSan would catch first; nothing is mapped there.
    volatile uintptr_t Wild = 64;
    *reinterpret_cast<volatile int *>(Wild) = 1;
  }
  dprintf(1, "child survived\n");
}

int runChildScenario(const char *Name) {
  Scenario = Name;
  if (Scenario == "chained-handler") {
    struct sigaction SA = {};
    SA.sa_handler = previousHandler;
    sigemptyset(&SA.sa_mask);
    sigaction(SIGSEGV, &SA, nullptr);
  }
  runOnThread(kStackSize, childThread);
  return 3;
}

} // namespace

int main(int argc, char **argv) {
  if (const char *Child = getenv(kChildEnv))
    return runChildScenario(Child);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
