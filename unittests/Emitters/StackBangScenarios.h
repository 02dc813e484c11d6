//===- StackBangScenarios.h - Stack-bang scenarios of both targets -*- C++ -*-//
//
// The stack-bang tests of x86_64 (StackBangEmitterTest.cpp, run natively)
// and AArch64 (A64StackBangTest.cpp, cross-built and run under qemu-aarch64)
// share what they check, written once here; each target supplies only its
// emitted code and how to call it. Like SafepointScenarios.h, this header
// needs nothing but the runtime's C ABI, GoogleTest and the standard library.
//
//   watermarkCases      the watermarks a probe (one check in a wrapper, on a
//                       fake thread) is run with, relative to its need, and
//                       whether the check must call the slow path: the
//                       compare is unsigned and `need <= watermark` calls.
//   alwaysStoreOffsets  where BangMode::Always must store, below the sp of
//                       the check: every page of the frame, then the shadow
//                       pages.
//   the recursions      an emitted function that checks at entry, allocates
//                       its frame, takes a monitor on every fourth level
//                       (two objects in turn, A B A B: non-adjacent re-entry
//                       inflates) and recurses:
//     shallowRecursionStaysOnTheFastPath  after a fresh thread's first run,
//                       runs of the same depth or less never call the slow
//                       path;
//     watermarkGoesDown  deeper runs lower the watermark below their deepest
//                       need;
//     overflowRecovers100TimesInARow  inside jitlock_rt_call_guarded, a
//                       recursion deeper than the thread's stack is caught by
//                       the entry check, with exactly the holds the recursion
//                       had released, 100 times; the thread runs as before
//                       afterwards;
//     alwaysOverflowHitsTheBackstop  BangMode::Always runs correctly, never
//                       calls, and its overflow is caught by the runtime's
//                       SIGSEGV backstop, 10 times.
//                       JITLOCK_STACKBANG_RECURSION_TESTS makes them the
//                       tests of a target's fixture.
//
// The recursions run on threads with a 1 MiB stack (onThread).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_STACKBANGSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_STACKBANGSCENARIOS_H

#include "LockState.h"

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace stackbang_scenarios {

/// Runs `Body` on a new thread with a stack of `Bytes` (or, when `Stack` is
/// given, on that memory), and waits for it.
inline void onThread(size_t Bytes, const std::function<void()> &Body,
                     void *Stack = nullptr) {
  pthread_attr_t Attr;
  ASSERT_EQ(pthread_attr_init(&Attr), 0);
  if (Stack)
    ASSERT_EQ(pthread_attr_setstack(&Attr, Stack, Bytes), 0);
  else
    ASSERT_EQ(pthread_attr_setstacksize(&Attr, Bytes), 0);
  pthread_t T;
  auto Start = [](void *P) -> void * {
    (*static_cast<const std::function<void()> *>(P))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&T, &Attr, Start,
                           const_cast<std::function<void()> *>(&Body)),
            0);
  pthread_join(T, nullptr);
  pthread_attr_destroy(&Attr);
}

constexpr size_t kThreadStack = 1 << 20;

//===-- The check on a fake thread ---------------------------------------===//

/// A watermark the probe's wrapper stores just before the check:
/// (need & Mask) + Add, need being the check's sp - ExtraBytes.
struct WatermarkCase {
  uint64_t Mask, Add;
  bool Calls;
  const char *What;
};

inline std::vector<WatermarkCase> watermarkCases() {
  return {
      {~0ull, 0, true, "wm == need"},
      {~0ull, ~0ull, false, "wm == need - 1"},
      {~0ull, 1, true, "wm == need + 1"},
      {0, 0, false, "wm == 0"},
      {0, 1ull << 63, true, "wm above need as unsigned, below as signed"},
      {0, ~0ull, true, "wm == ~0"},
  };
}

/// How far below the check's sp BangMode::Always stores, for a frame of
/// `Extra` bytes.
inline std::set<uint64_t> alwaysStoreOffsets(const jitlock_rt_layout &L,
                                             uint32_t Extra) {
  std::set<uint64_t> Offsets;
  const uint64_t Page = L.stack_page_size;
  for (uint64_t Off = Page; Off <= Extra; Off += Page)
    Offsets.insert(Off);
  for (uint64_t I = 1; I <= L.stack_shadow_pages; ++I)
    Offsets.insert(Extra + I * Page);
  return Offsets;
}

//===-- Recursion in emitted code ----------------------------------------===//

/// The context of an emitted recursion: void fn(RecCtx *) runs rec(Depth).
/// rec checks the stack at its entry, allocates its frame, records the
/// lowest sp, counts itself, enters Objs[(Depth >> 2) & 1] when Depth % 4
/// == 0, recurses with Depth - 1 until 0, and exits what it entered on the
/// way back.
struct RecCtx {
  jitlock_thread *Thread = nullptr;
  uint64_t Depth = 0; ///< levels to run (>= 1)
  void *Objs[2] = {};
  uint64_t Entered = 0; ///< levels that passed the check
  int64_t Holds = 0;    ///< monitor holds the recursion has, net
  uint64_t MinNeed = ~0ull;
};

/// One target's recursion, built for the mode a scenario needs.
struct Recursion {
  /// Runs the emitted function on the calling thread.
  std::function<void(RecCtx &)> Run;
  /// Calls that reached the stack-bang entry so far, and those whose sp
  /// was not 16-byte aligned.
  std::function<uint64_t()> SlowCalls, MisalignedCalls;
  /// The stack one level takes: its frame and what its call pushes (the
  /// return address on x86_64, nothing on AArch64).
  uint64_t LevelBytes;
  /// The two objects, which outlive the runtime's shutdown.
  void *ObjA, *ObjB;

  RecCtx context(jitlock_thread *Self, uint64_t Depth) const {
    RecCtx C;
    C.Thread = Self;
    C.Depth = Depth;
    C.Objs[0] = ObjA;
    C.Objs[1] = ObjB;
    return C;
  }
  /// For jitlock_rt_call_guarded.
  struct Call {
    const Recursion *R;
    RecCtx *C;
  };
  static void guarded(void *P) {
    Call &K = *static_cast<Call *>(P);
    K.R->Run(*K.C);
  }
};

/// How many holds of object 0 and 1 levels 1..Entered of a recursion of
/// `Depth` levels took.
inline std::pair<uint64_t, uint64_t> expectedHolds(uint64_t Depth,
                                                   uint64_t Entered) {
  uint64_t H[2] = {0, 0};
  for (uint64_t K = 1; K <= Entered; ++K) {
    uint64_t D = Depth - K + 1;
    if (D % 4 == 0)
      ++H[(D >> 2) & 1];
  }
  return {H[0], H[1]};
}

/// Both objects free, and the thread's lock stack empty.
inline void expectAllReleased(const Recursion &R, jitlock_thread *Self,
                              const char *What) {
  emit_test::expectReleased(R.ObjA, What);
  emit_test::expectReleased(R.ObjB, What);
  void *Out[16];
  EXPECT_EQ(jitlock_rt_lock_stack(Self, Out, 16), 0u) << What;
}

/// Runs `Body` on a new thread with a stack of kThreadStack, attached
/// (`Self`) for the time of the call.
inline void
onAttachedThread(const std::function<void(jitlock_thread *Self)> &Body) {
  onThread(kThreadStack, [&] {
    jitlock_thread *Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    Body(Self);
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  });
}

/// Runs a recursion too deep for any stack inside jitlock_rt_call_guarded,
/// the holds it releases going to `Released`; returns what that returned.
inline int runTooDeep(const Recursion &R, RecCtx &C,
                      std::vector<void *> &Released,
                      jitlock_guarded_result &G) {
  C.Depth = 1u << 30;
  Recursion::Call K{&R, &C};
  G = jitlock_guarded_result{};
  G.released = Released.data();
  G.released_cap = Released.size();
  return jitlock_rt_call_guarded(C.Thread, &Recursion::guarded, &K, &G);
}

/// `R` checks in BangMode::Watermark.
inline void shallowRecursionStaysOnTheFastPath(const Recursion &R) {
  onAttachedThread([&](jitlock_thread *Self) {
    // A fresh thread's watermark is its stack base: the first checks call
    // the runtime, which bangs and lowers it.
    RecCtx C = R.context(Self, 40);
    R.Run(C);
    EXPECT_EQ(C.Entered, 40u);
    EXPECT_EQ(C.Holds, 0);
    const uint64_t First = R.SlowCalls();
    EXPECT_GE(First, 1u);
    EXPECT_LE(First, 40u);
    // From then on, the same depth or less never calls it.
    for (uint64_t Depth : {40u, 40u, 20u, 1u, 39u}) {
      RecCtx D = R.context(Self, Depth);
      R.Run(D);
      EXPECT_EQ(D.Entered, Depth);
      EXPECT_EQ(D.Holds, 0);
      EXPECT_EQ(R.SlowCalls(), First) << "depth " << Depth;
    }
    expectAllReleased(R, Self, "after the shallow runs");
    EXPECT_EQ(R.MisalignedCalls(), 0u);
  });
}

/// `R` checks in BangMode::Watermark.
inline void watermarkGoesDown(const Recursion &R) {
  onAttachedThread([&](jitlock_thread *Self) {
    jitlock_stack_info I0{};
    ASSERT_EQ(jitlock_rt_stack_info(Self, &I0), JITLOCK_OK);
    EXPECT_EQ(I0.watermark, I0.base) << "a fresh thread's watermark";
    uint64_t PrevMark = I0.watermark, PrevCalls = 0;
    // Each deeper run lowers the watermark below its deepest need; the
    // depths stay well inside the 1 MiB stack.
    const uint64_t Room = (I0.base - I0.safe_limit) / R.LevelBytes;
    for (uint64_t Depth : {uint64_t(2), Room / 8, Room / 4, Room / 2}) {
      if (Depth < 2)
        continue;
      RecCtx C = R.context(Self, Depth);
      R.Run(C);
      ASSERT_EQ(C.Entered, Depth);
      EXPECT_EQ(C.Holds, 0);
      jitlock_stack_info I{};
      ASSERT_EQ(jitlock_rt_stack_info(Self, &I), JITLOCK_OK);
      EXPECT_LT(I.watermark, PrevMark) << "depth " << Depth;
      EXPECT_LT(I.watermark, C.MinNeed) << "depth " << Depth;
      EXPECT_GE(I.watermark, I.safe_limit);
      EXPECT_GT(R.SlowCalls(), PrevCalls) << "depth " << Depth;
      EXPECT_EQ(I.overflows, 0u);
      PrevMark = I.watermark;
      PrevCalls = R.SlowCalls();
    }
    expectAllReleased(R, Self, "after the runs");
  });
}

/// `R` checks in BangMode::Watermark.
inline void overflowRecovers100TimesInARow(const Recursion &R) {
  onAttachedThread([&](jitlock_thread *Self) {
    uint64_t FirstEntered = 0;
    std::vector<void *> Released(1 << 16);
    for (int Round = 0; Round < 100; ++Round) {
      SCOPED_TRACE("round " + std::to_string(Round));
      RecCtx C = R.context(Self, 0);
      jitlock_guarded_result G;
      int Rc = runTooDeep(R, C, Released, G);
      ASSERT_EQ(Rc, JITLOCK_ESTACK_OVERFLOW) << jitlock_rt_status_name(Rc);
      // Caught by the check, not by a fault.
      EXPECT_EQ(G.overflow.from_signal, 0u);
      EXPECT_EQ(G.overflow.zone, uint32_t(JITLOCK_ZONE_SHADOW));
      EXPECT_EQ(G.overflow.thread, Self);
      EXPECT_EQ(G.overflow.fault_addr, 0u);
      // The level that did not fit: one level below the deepest that did.
      EXPECT_EQ(G.overflow.sp, C.MinNeed - R.LevelBytes);
      EXPECT_GT(C.Entered, 100u);
      if (Round == 0)
        FirstEntered = C.Entered;
      else
        EXPECT_EQ(C.Entered, FirstEntered) << "the same depth every time";
      // Every hold the recursion still had is released, once.
      auto [HoldsA, HoldsB] = expectedHolds(C.Depth, C.Entered);
      EXPECT_EQ(uint64_t(C.Holds), HoldsA + HoldsB);
      ASSERT_EQ(G.released_count, HoldsA + HoldsB);
      ASSERT_LE(G.released_count, Released.size());
      uint64_t SeenA = 0, SeenB = 0;
      for (size_t I = 0; I < G.released_count; ++I) {
        SeenA += Released[I] == R.ObjA;
        SeenB += Released[I] == R.ObjB;
      }
      EXPECT_EQ(SeenA, HoldsA);
      EXPECT_EQ(SeenB, HoldsB);
      expectAllReleased(R, Self, "after the overflow");
      if (::testing::Test::HasFailure())
        return;
    }
    jitlock_stack_info I{};
    ASSERT_EQ(jitlock_rt_stack_info(Self, &I), JITLOCK_OK);
    EXPECT_EQ(I.overflows, 100u);
    // Afterwards the thread runs as before: no slow call at a modest depth.
    const uint64_t Calls = R.SlowCalls();
    RecCtx C = R.context(Self, 50);
    R.Run(C);
    EXPECT_EQ(C.Entered, 50u);
    EXPECT_EQ(C.Holds, 0);
    EXPECT_EQ(R.SlowCalls(), Calls) << "a normal run after the overflows";
    expectAllReleased(R, Self, "after a normal run");
    EXPECT_EQ(R.MisalignedCalls(), 0u);
  });
}

/// `R` checks in BangMode::Always.
inline void alwaysOverflowHitsTheBackstop(const Recursion &R) {
  onAttachedThread([&](jitlock_thread *Self) {
    jitlock_stack_info I0{};
    ASSERT_EQ(jitlock_rt_stack_info(Self, &I0), JITLOCK_OK);
    // Correct runs, well within the stack.
    const uint64_t Room = (I0.base - I0.safe_limit) / R.LevelBytes;
    for (uint64_t Depth : {uint64_t(1), uint64_t(37), Room / 2}) {
      RecCtx C = R.context(Self, Depth);
      R.Run(C);
      EXPECT_EQ(C.Entered, Depth);
      EXPECT_EQ(C.Holds, 0);
    }
    if (!(I0.protected_zones & (1u << JITLOCK_ZONE_YELLOW))) {
      ADD_FAILURE() << "the yellow zone is not protected: no backstop";
      return;
    }
    std::vector<void *> Released(1 << 16);
    for (int Round = 0; Round < 10; ++Round) {
      SCOPED_TRACE("round " + std::to_string(Round));
      RecCtx C = R.context(Self, 0);
      jitlock_guarded_result G;
      int Rc = runTooDeep(R, C, Released, G);
      ASSERT_EQ(Rc, JITLOCK_ESTACK_OVERFLOW) << jitlock_rt_status_name(Rc);
      EXPECT_EQ(G.overflow.from_signal, 1u);
      EXPECT_TRUE(G.overflow.zone == JITLOCK_ZONE_RESERVED ||
                  G.overflow.zone == JITLOCK_ZONE_YELLOW)
          << "zone " << G.overflow.zone;
      EXPECT_NE(G.overflow.fault_addr, 0u);
      auto [HoldsA, HoldsB] = expectedHolds(C.Depth, C.Entered);
      EXPECT_EQ(uint64_t(C.Holds), HoldsA + HoldsB);
      EXPECT_EQ(G.released_count, HoldsA + HoldsB);
      expectAllReleased(R, Self, "after the backstop");
      // The zone the backstop unprotected is protected again.
      jitlock_stack_info I{};
      ASSERT_EQ(jitlock_rt_stack_info(Self, &I), JITLOCK_OK);
      EXPECT_EQ(I.protected_zones, I0.protected_zones);
      if (::testing::Test::HasFailure())
        return;
    }
    EXPECT_EQ(R.SlowCalls(), 0u) << "Always has no slow call";
  });
}

} // namespace stackbang_scenarios

/// The recursion scenarios as tests of `Fixture`, a parameterized test with
/// `void run(BangMode, void (*Scenario)(const Recursion &))`, which builds
/// the target's recursion for the mode and runs the scenario on it.
#define JITLOCK_STACKBANG_RECURSION_TESTS(Fixture)                             \
  TEST_P(Fixture, ShallowRecursionStaysOnTheFastPath) {                        \
    run(BangMode::Watermark,                                                   \
        stackbang_scenarios::shallowRecursionStaysOnTheFastPath);              \
  }                                                                            \
  TEST_P(Fixture, TheWatermarkGoesDown) {                                      \
    run(BangMode::Watermark, stackbang_scenarios::watermarkGoesDown);          \
  }                                                                            \
  TEST_P(Fixture, OverflowRecovers100TimesInARow) {                            \
    run(BangMode::Watermark,                                                   \
        stackbang_scenarios::overflowRecovers100TimesInARow);                  \
  }                                                                            \
  TEST_P(Fixture, AlwaysOverflowHitsTheBackstop) {                             \
    run(BangMode::Always, stackbang_scenarios::alwaysOverflowHitsTheBackstop); \
  }

#endif // JITLOCK_UNITTESTS_EMITTERS_STACKBANGSCENARIOS_H
