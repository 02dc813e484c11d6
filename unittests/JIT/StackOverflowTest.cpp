//===- StackOverflowTest.cpp - Stack overflow in JIT code, recovered ------===//
//
// A deep recursion with "jitlock-stack-bang", JIT-compiled in this process,
// that takes locks on its way down, run inside jitlock_rt_call_guarded on a
// thread with a small stack:
//
//   watermark  it overflows at a method-entry check (zone SHADOW), 100 times
//              in a row on one thread, and each time the call returns
//              JITLOCK_ESTACK_OVERFLOW with exactly the holds taken inside
//              released, nothing left held, the watermark monotone and at or
//              above safe_limit, and the guard zones protected;
//   always     the shadow-page stores fault in the reserved zone and the
//              SIGSEGV backstop recovers (from_signal = 1), with the same
//              guarantees;
//   none       no check: normal runs never call the slow path.
//
// The primordial thread's guard zones stay unprotected (its stack is not
// mapped below what it used), so every scenario runs on a pthread with an
// explicit stack.
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <pthread.h>
#include <string>
#include <thread>
#include <vector>

using namespace jitlock;
using namespace llvm;

namespace {

/// Every `LockEvery`-th level locks objs[(level / LockEvery) % 3] for the
/// rest of its call: a, b, c, a, ... (non-adjacent re-entry, so the runtime
/// inflates). @reached is the deepest level that got past its lock.
constexpr int64_t LockEvery = 64;
constexpr int NumObjects = 3;

const char *const DeepIR = R"IR(
%Object = type { i64, i64 }

@objs = global [3 x %Object] [%Object { i64 1, i64 0 },
                              %Object { i64 1, i64 0 },
                              %Object { i64 1, i64 0 }]
@reached = global i64 0

declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)

define void @fill(ptr %frame, i64 %level) noinline {
  %i = urem i64 %level, 32
  %slot = getelementptr inbounds [32 x i64], ptr %frame, i64 0, i64 %i
  store volatile i64 %level, ptr %slot
  ret void
}

define void @descend(i64 %level, i64 %depth) "jitlock-stack-bang" {
entry:
  %frame = alloca [32 x i64]
  call void @fill(ptr %frame, i64 %level)
  %deeper = icmp slt i64 %level, %depth
  %next = add i64 %level, 1
  %phase = urem i64 %level, 64
  %lock.level = icmp eq i64 %phase, 0
  br i1 %lock.level, label %locked, label %plain

locked:
  %turn = udiv i64 %level, 64
  %which = urem i64 %turn, 3
  %obj = getelementptr inbounds [3 x %Object], ptr @objs, i64 0, i64 %which
  call void @jitlock.monitor.enter(ptr %obj)
  %count.addr = getelementptr inbounds %Object, ptr %obj, i32 0, i32 1
  %count = load i64, ptr %count.addr
  %count.next = add i64 %count, 1
  store i64 %count.next, ptr %count.addr
  store volatile i64 %level, ptr @reached
  br i1 %deeper, label %locked.call, label %locked.done

locked.call:
  call void @descend(i64 %next, i64 %depth)
  br label %locked.done

locked.done:
  call void @fill(ptr %frame, i64 %level)
  call void @jitlock.monitor.exit(ptr %obj)
  ret void

plain:
  store volatile i64 %level, ptr @reached
  br i1 %deeper, label %plain.call, label %plain.done

plain.call:
  call void @descend(i64 %next, i64 %depth)
  br label %plain.done

plain.done:
  call void @fill(ptr %frame, i64 %level)
  ret void
}

define void @go(i64 %depth) {
  call void @descend(i64 1, i64 %depth)
  ret void
}
)IR";

/// Small enough that an overflow takes a few thousand levels.
constexpr size_t ThreadStack = 1 << 20;
/// Deeper than any stack.
constexpr int64_t Unbounded = int64_t(1) << 40;

constexpr uint32_t GuardZoneBits = (1u << JITLOCK_ZONE_RED) |
                                   (1u << JITLOCK_ZONE_YELLOW) |
                                   (1u << JITLOCK_ZONE_RESERVED);

/// Runs `Body` on a new pthread with a stack of `StackSize` bytes.
void runOnThread(size_t StackSize, std::function<void()> Body) {
  pthread_attr_t Attr;
  ASSERT_EQ(pthread_attr_init(&Attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&Attr, StackSize), 0);
  pthread_t T;
  auto Trampoline = [](void *P) -> void * {
    (*static_cast<std::function<void()> *>(P))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&T, &Attr, Trampoline, &Body), 0);
  pthread_attr_destroy(&Attr);
  ASSERT_EQ(pthread_join(T, nullptr), 0);
}

/// The JIT'd module: @go and the addresses of @objs and @reached.
struct DeepModule {
  std::unique_ptr<JitSession> S;
  void (*Go)(int64_t) = nullptr;
  void *Objs[NumObjects] = {};
  volatile int64_t *Reached = nullptr;

  /// The objects locked by levels 1..Level: one entry per hold, sorted.
  std::vector<void *> holdsUpTo(int64_t Level) const {
    std::vector<void *> Out;
    for (int64_t L = LockEvery; L <= Level; L += LockEvery)
      Out.push_back(Objs[(L / LockEvery) % NumObjects]);
    std::sort(Out.begin(), Out.end());
    return Out;
  }
};

DeepModule compile(BangMode Mode) {
  DeepModule D;
  JitOptions Opts;
  Opts.Bang = Mode;
  auto S = JitSession::loadBuffer(DeepIR, "deep", Opts);
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return D;
  }
  D.S = std::move(*S);
  EXPECT_EQ(D.S->bangMode(), Mode);
  auto Go = D.S->lookupFunction<void(int64_t)>("go");
  auto Objs = D.S->lookup("objs");
  auto Reached = D.S->lookup("reached");
  if (!Go || !Objs || !Reached) {
    ADD_FAILURE() << "lookup failed";
    consumeError(Go.takeError());
    consumeError(Objs.takeError());
    consumeError(Reached.takeError());
    return D;
  }
  D.Go = *Go;
  for (int I = 0; I != NumObjects; ++I)
    D.Objs[I] = static_cast<char *>(*Objs) + I * 16;
  D.Reached = static_cast<volatile int64_t *>(*Reached);
  return D;
}

struct GoArgs {
  void (*Go)(int64_t);
  int64_t Depth;
};

/// jitlock_rt_call_guarded(go(depth)) on the calling thread.
int callGo(const DeepModule &D, int64_t Depth, jitlock_guarded_result *R) {
  GoArgs Args{D.Go, Depth};
  return jitlock_rt_call_guarded(
      jitlock_rt_current(),
      [](void *P) {
        auto *A = static_cast<GoArgs *>(P);
        A->Go(A->Depth);
      },
      &Args, R);
}

/// No thread holds any of the objects, and this thread's lock stack is
/// empty; another thread can take and release each of them.
void expectNothingHeld(const DeepModule &D, const std::string &Where) {
  void *Entries[16];
  EXPECT_EQ(jitlock_rt_lock_stack(jitlock_rt_current(), Entries, 16), 0u)
      << Where;
  for (void *Obj : D.Objs) {
    jitlock_lock_info Info;
    ASSERT_EQ(jitlock_rt_inspect(Obj, &Info), JITLOCK_OK) << Where;
    EXPECT_EQ(Info.owner, nullptr) << Where;
    EXPECT_EQ(Info.anonymous_owner, 0u) << Where;
    EXPECT_EQ(Info.holds, 0u) << Where;
    EXPECT_NE(Info.state, uint32_t(JITLOCK_STATE_FAST)) << Where;
  }
  std::thread Other([&] {
    jitlock_thread *T = jitlock_rt_attach();
    for (void *Obj : D.Objs) {
      EXPECT_EQ(jitlock_rt_monitor_enter(T, Obj), JITLOCK_OK) << Where;
      EXPECT_EQ(jitlock_rt_monitor_exit(T, Obj), JITLOCK_OK) << Where;
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK) << Where;
  });
  Other.join();
}

/// The released list as a sorted multiset (the runtime releases lock-stack
/// entries top-down, then monitors; the order among monitors is not
/// specified).
std::vector<void *> releasedSorted(const jitlock_guarded_result &R) {
  std::vector<void *> Out(R.released, R.released + R.released_count);
  std::sort(Out.begin(), Out.end());
  return Out;
}

class StackOverflowTest : public ::testing::Test {
protected:
  /// A module compiled for `Mode`, owned by the fixture: monitors point into
  /// its memory until TearDown's shutdown restores the headers.
  const DeepModule &deep(BangMode Mode) {
    Modules.push_back(compile(Mode));
    return Modules.back();
  }
  void TearDown() override { EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK); }

private:
  std::deque<DeepModule> Modules;
};

TEST_F(StackOverflowTest, WatermarkOverflowRecovers100Times) {
  const DeepModule &D = deep(BangMode::Watermark);
  ASSERT_TRUE(D.Go);
  runOnThread(ThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    jitlock_stack_info Before;
    ASSERT_EQ(jitlock_rt_stack_info(Self, &Before), JITLOCK_OK);
    ASSERT_EQ(Before.protected_zones & GuardZoneBits, GuardZoneBits)
        << "the guard zones of a pthread are protected at attach";

    // A depth that fits: no overflow, every lock released by the code.
    ASSERT_EQ(callGo(D, 200, nullptr), JITLOCK_OK);
    EXPECT_EQ(*D.Reached, 200);
    expectNothingHeld(D, "after a run that fits");

    std::vector<void *> Released(4096);
    uintptr_t LastMark = UINTPTR_MAX;
    int64_t FirstReached = -1;
    for (int I = 0; I != 100; ++I) {
      std::string Where = "overflow " + std::to_string(I);
      *D.Reached = 0;
      jitlock_guarded_result R{};
      R.released = Released.data();
      R.released_cap = Released.size();
      ASSERT_EQ(callGo(D, Unbounded, &R), JITLOCK_ESTACK_OVERFLOW) << Where;

      // Caught by the entry check of the level after the deepest one.
      EXPECT_EQ(R.overflow.thread, Self) << Where;
      EXPECT_EQ(R.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW)) << Where;
      EXPECT_EQ(R.overflow.from_signal, 0u) << Where;
      EXPECT_LE(R.overflow.sp, R.overflow.stack.safe_limit) << Where;
      int64_t Reached = *D.Reached;
      EXPECT_GT(Reached, 4 * LockEvery) << Where;
      if (FirstReached < 0)
        FirstReached = Reached;
      // The same code on the same stack overflows at the same level.
      EXPECT_EQ(Reached, FirstReached) << Where;

      // Exactly the holds taken on the way down, each once.
      std::vector<void *> Expected = D.holdsUpTo(Reached);
      ASSERT_LE(R.released_count, R.released_cap) << Where;
      EXPECT_EQ(R.released_count, Expected.size()) << Where;
      EXPECT_EQ(releasedSorted(R), Expected) << Where;
      expectNothingHeld(D, Where);

      jitlock_stack_info Info;
      ASSERT_EQ(jitlock_rt_stack_info(Self, &Info), JITLOCK_OK) << Where;
      EXPECT_GE(Info.watermark, Info.safe_limit) << Where;
      EXPECT_LE(Info.watermark, LastMark) << Where << ": the watermark rose";
      LastMark = Info.watermark;
      EXPECT_EQ(Info.protected_zones & GuardZoneBits, GuardZoneBits) << Where;
      EXPECT_EQ(Info.overflows, Before.overflows + I + 1) << Where;
    }

    // Still usable: a run that fits runs to completion.
    ASSERT_EQ(callGo(D, 500, nullptr), JITLOCK_OK);
    EXPECT_EQ(*D.Reached, 500);
    expectNothingHeld(D, "after the overflows");
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackOverflowTest, HoldsFromBeforeTheCallAreKept) {
  const DeepModule &D = deep(BangMode::Watermark);
  ASSERT_TRUE(D.Go);
  runOnThread(ThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    // Held before the guarded call, and taken again inside it.
    ASSERT_EQ(jitlock_rt_monitor_enter(Self, D.Objs[1]), JITLOCK_OK);
    std::vector<void *> Released(4096);
    jitlock_guarded_result R{};
    R.released = Released.data();
    R.released_cap = Released.size();
    ASSERT_EQ(callGo(D, Unbounded, &R), JITLOCK_ESTACK_OVERFLOW);
    EXPECT_EQ(releasedSorted(R), D.holdsUpTo(*D.Reached));
    EXPECT_TRUE(jitlock_rt_holds_lock(Self, D.Objs[1]));
    jitlock_lock_info Info;
    ASSERT_EQ(jitlock_rt_inspect(D.Objs[1], &Info), JITLOCK_OK);
    EXPECT_EQ(Info.holds, 1u);
    ASSERT_EQ(jitlock_rt_monitor_exit(Self, D.Objs[1]), JITLOCK_OK);
    expectNothingHeld(D, "after releasing the outer hold");
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackOverflowTest, AlwaysModeOverflowIsCaughtByTheBackstop) {
  const DeepModule &D = deep(BangMode::Always);
  ASSERT_TRUE(D.Go);
  // The check is stores only: no slow-path call in the code.
  for (const Function &F : D.S->module())
    EXPECT_NE(F.getName(), "jitlock_rt_stack_bang");
  runOnThread(ThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_EQ(callGo(D, 200, nullptr), JITLOCK_OK);
    expectNothingHeld(D, "after a run that fits");
    std::vector<void *> Released(4096);
    for (int I = 0; I != 10; ++I) {
      std::string Where = "overflow " + std::to_string(I);
      *D.Reached = 0;
      jitlock_guarded_result R{};
      R.released = Released.data();
      R.released_cap = Released.size();
      ASSERT_EQ(callGo(D, Unbounded, &R), JITLOCK_ESTACK_OVERFLOW) << Where;
      // The stores go top down: the first protected page they touch is the
      // reserved zone's highest.
      EXPECT_EQ(R.overflow.from_signal, 1u) << Where;
      EXPECT_EQ(R.overflow.zone, uint32_t(JITLOCK_ZONE_RESERVED)) << Where;
      EXPECT_GE(R.overflow.fault_addr, R.overflow.stack.yellow_top) << Where;
      EXPECT_LT(R.overflow.fault_addr, R.overflow.stack.reserved_top) << Where;
      EXPECT_EQ(releasedSorted(R), D.holdsUpTo(*D.Reached)) << Where;
      expectNothingHeld(D, Where);
      jitlock_stack_info Info;
      ASSERT_EQ(jitlock_rt_stack_info(Self, &Info), JITLOCK_OK);
      EXPECT_EQ(Info.protected_zones & GuardZoneBits, GuardZoneBits)
          << Where << ": the backstop's zone is protected again";
      EXPECT_EQ(Info.bangs, 0u)
          << Where << ": always never calls the slow path";
    }
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

TEST_F(StackOverflowTest, NoneModeRunsWithoutChecks) {
  const DeepModule &None = deep(BangMode::None);
  const DeepModule &Watermark = deep(BangMode::Watermark);
  ASSERT_TRUE(None.Go && Watermark.Go);
  for (const Function &F : None.S->module())
    EXPECT_FALSE(F.getName() == "jitlock_rt_stack_bang" ||
                 F.getName().starts_with("llvm.stacksave"))
        << F.getName().str();
  runOnThread(ThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    jitlock_stack_info Info;
    for (int I = 0; I != 3; ++I) {
      ASSERT_EQ(callGo(None, 1000, nullptr), JITLOCK_OK);
      EXPECT_EQ(*None.Reached, 1000);
      expectNothingHeld(None, "none");
    }
    ASSERT_EQ(jitlock_rt_stack_info(Self, &Info), JITLOCK_OK);
    EXPECT_EQ(Info.bangs, 0u) << "bang=none never calls the slow path";
    EXPECT_EQ(Info.watermark, Info.base) << "nothing lowered the watermark";

    // The same depth with the watermark check banged on the way down.
    ASSERT_EQ(callGo(Watermark, 1000, nullptr), JITLOCK_OK);
    ASSERT_EQ(jitlock_rt_stack_info(Self, &Info), JITLOCK_OK);
    EXPECT_GT(Info.bangs, 0u);
    EXPECT_LT(Info.watermark, Info.base);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

} // namespace
