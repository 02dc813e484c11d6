//===- MixedTierTest.cpp - asmjit-emitted and LLVM-lowered code together --===//
//
// One runtime, one protocol: threads running code that the asmjit emitters
// wrote and threads running code that the LLVM lowering produced (through
// jitlock_jit, the in-process LLJIT of jitlock-run) lock the same objects at
// the same time. Mutual exclusion is checked with unguarded counters, and the
// lock states and lock stacks must be consistent afterwards. The anonymous
// owner fix-up is also driven across tiers deterministically, both ways.
//
// The suite must pass 100 runs in a row:
//   MixedTierTest --gtest_repeat=100 --gtest_break_on_failure
//
//===----------------------------------------------------------------------===//
#include "EmitterTestUtil.h"

#include "../Runtime/RuntimeTestUtil.h"

#include "jitlock/JIT.h"

#include "llvm/Support/Error.h"

#include <deque>
#include <memory>
#include <thread>
#include <type_traits>

using namespace emit_test;
using namespace jitlock_test;

namespace {

using SimpleFn = void(void *Obj, uint64_t *Counter, int64_t N);
using NestedFn = void(void *A, void *B, uint64_t *CA, uint64_t *CB, int64_t N);
using HoldFn = void(void *Obj, void (*Fn)(void *), void *Arg);

class MixedTierTest : public RuntimeTest {
protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    auto S = jitlock::JitSession::loadFile(
        std::string(JITLOCK_EMITTER_INPUTS_DIR) + "/mixed.ll");
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    Session = std::move(*S);
    auto Lookup = [&](const char *Name, auto *&Out) {
      auto F = Session->lookupFunction<
          std::remove_pointer_t<std::remove_reference_t<decltype(Out)>>>(Name);
      ASSERT_TRUE(bool(F)) << Name << ": " << llvm::toString(F.takeError());
      Out = *F;
    };
    Lookup("mixed_simple", LlvmSimple);
    Lookup("mixed_recursive", LlvmRecursive);
    Lookup("mixed_nested", LlvmNested);
    Lookup("mixed_hold", LlvmHold);
    ASSERT_TRUE(LlvmSimple && LlvmRecursive && LlvmNested && LlvmHold);
  }

  void *object() { return &Arena.emplace_back(); }

  std::unique_ptr<jitlock::JitSession> Session;
  SimpleFn *LlvmSimple = nullptr, *LlvmRecursive = nullptr;
  NestedFn *LlvmNested = nullptr;
  HoldFn *LlvmHold = nullptr;
  std::deque<Obj> Arena;
};

/// One thread's work: rounds of the three shapes on A and B, in a rotation
/// that starts at a different shape in every thread, through one tier.
struct Rotation {
  static constexpr unsigned Shapes = 4;
  // Shape K adds these to (counter A, counter B) per iteration.
  static uint64_t addsA(unsigned K) { return K == 0 || K == 1 ? 1 : 0; }
  static uint64_t addsB(unsigned K) { return K == 0 ? 0 : 1; }
};

TEST_F(MixedTierTest, BothTiersContendOnTheSameObjects) {
  // Shapes: 0 simple(A), 1 nested(A, B), 2 recursive(B), 3 simple(B).
  // Workers with an even number run the LLVM tier, odd ones the asmjit tier.
  const unsigned Workers = 4;
  const unsigned Rounds = 8;
  // Iterations per shape and round; doubled on every attempt that saw no
  // contention (a thread can finish a short run inside one time slice when
  // the threads share a CPU).
  int64_t PerShape = 400;
  void *A = object(), *B = object();
  uint64_t CounterA = 0, CounterB = 0, ExpectA = 0, ExpectB = 0;

  // Worker 1 emits without Scratch2, worker 3 with it.
  std::vector<Assignment> S = sampleAssignments(),
                          S3 = sampleThreeScratchAssignments();
  RuntimeShim Shim(hostVecLevel());
  struct Emitted {
    std::unique_ptr<Program> Simple, Recursive, Nested;
  };
  std::vector<Emitted> Programs(Workers);
  for (unsigned T = 1; T < Workers; T += 2) {
    SlowPathMode M =
        T % 4 == 1 ? SlowPathMode::OutOfLine : SlowPathMode::Labels;
    RuntimeEntries RT = T % 4 == 1 ? Shim.entries() : RuntimeEntries{};
    const Assignment &As =
        T % 4 == 3 ? S3[(T * 3) % S3.size()] : S[(T * 3) % S.size()];
    Programs[T].Simple = std::make_unique<Program>(As, SimpleBody, M, RT);
    Programs[T].Recursive = std::make_unique<Program>(As, RecursiveBody, M, RT);
    Programs[T].Nested = std::make_unique<Program>(As, NestedBody, M, RT);
  }

  // One worker's rounds of the four shapes, starting at shape T.
  auto Work = [&](unsigned T, jitlock_thread *Self) {
    for (unsigned R = 0; R < Rounds; ++R)
      for (unsigned I = 0; I < Rotation::Shapes; ++I) {
        unsigned K = (I + T) % Rotation::Shapes;
        if (T % 2 == 0) { // the LLVM tier
          switch (K) {
          case 0:
            callJit(LlvmSimple, A, &CounterA, PerShape);
            break;
          case 1:
            callJit(LlvmNested, A, B, &CounterA, &CounterB, PerShape);
            break;
          case 2:
            callJit(LlvmRecursive, B, &CounterB, PerShape);
            break;
          case 3:
            callJit(LlvmSimple, B, &CounterB, PerShape);
            break;
          }
        } else { // the asmjit tier
          ProgramCtx Ctx;
          Ctx.Thread = Self;
          Ctx.Remaining = PerShape;
          Ctx.Objs[0] = K == 0 || K == 1 ? A : B;
          Ctx.Objs[1] = B;
          Ctx.Counters[0] = K == 0 || K == 1 ? &CounterA : &CounterB;
          Ctx.Counters[1] = &CounterB;
          const Emitted &E = Programs[T];
          (K == 1 ? E.Nested : K == 2 ? E.Recursive : E.Simple)->run(Ctx);
        }
        ASSERT_TRUE(lockStack(Self).empty())
            << "worker " << T << " shape " << K << " left entries";
        ASSERT_FALSE(jitlock_rt_holds_lock(Self, A));
        ASSERT_FALSE(jitlock_rt_holds_lock(Self, B));
      }
  };

  // Runs the given workers at once on their own attached threads, checks
  // the counters and the lock states, and returns how many enters found
  // another owner (the runtime's counters accumulate: a delta).
  auto Phase = [&](const std::vector<unsigned> &Ids) -> uint64_t {
    const jitlock_rt_stats Before = stats();
    std::atomic<unsigned> Ready{0};
    std::vector<std::thread> Pool;
    for (unsigned T : Ids)
      Pool.emplace_back([&, T] {
        jitlock_thread *Self = jitlock_rt_attach();
        EXPECT_NE(Self, nullptr);
        Ready.fetch_add(1);
        while (Ready.load() < Ids.size())
          std::this_thread::yield();
        Work(T, Self);
        EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK) << "worker " << T;
      });
    for (std::thread &T : Pool)
      T.join();
    for (size_t I = 0; I < Ids.size(); ++I)
      for (unsigned K = 0; K < Rotation::Shapes; ++K) {
        ExpectA += Rotation::addsA(K) * Rounds * PerShape;
        ExpectB += Rotation::addsB(K) * Rounds * PerShape;
      }
    EXPECT_EQ(CounterA, ExpectA) << "lost updates under A";
    EXPECT_EQ(CounterB, ExpectB) << "lost updates under B";
    expectReleased(A, "A");
    expectReleased(B, "B");
    return stats().contended_enters - Before.contended_enters;
  };

  // One thread per tier first, until they have met (then every contended
  // enter was one tier meeting the other), then all workers together.
  uint64_t CrossTier = 0;
  for (unsigned Attempt = 0; Attempt < 8 && !CrossTier && !HasFailure();
       ++Attempt, PerShape *= 2)
    CrossTier = Phase({0, 1});
  EXPECT_GT(CrossTier, 0u) << "the two tiers never met on the objects";
  uint64_t All = 0;
  PerShape = 400;
  for (unsigned Attempt = 0; Attempt < 8 && !All && !HasFailure();
       ++Attempt, PerShape *= 2)
    All = Phase({0, 1, 2, 3});
  EXPECT_GT(All, 0u) << "the workers never met on the objects";
  RecordProperty("cross_tier_contended_enters", std::to_string(CrossTier));
  RecordProperty("contended_enters", std::to_string(All));

  EXPECT_TRUE(lockStack(self).empty());
  EXPECT_EQ(Shim.misaligned(), 0u);
  // Idle monitors give the unlocked header back, every embedder bit intact.
  ASSERT_EQ(jitlock_rt_detach(), JITLOCK_OK);
  ASSERT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  EXPECT_EQ(static_cast<Obj *>(A)->hdr(), kUnlockedHeader);
  EXPECT_EQ(static_cast<Obj *>(B)->hdr(), kUnlockedHeader);
}

/// Blocks the LLVM tier's critical section until the test releases it.
struct Gate {
  std::atomic<bool> Inside{false};
  std::atomic<bool> Open{false};
  static void callback(void *P) {
    auto *G = static_cast<Gate *>(P);
    G->Inside.store(true);
    while (!G->Open.load())
      std::this_thread::yield();
  }
};

TEST_F(MixedTierTest, LlvmHolderHandsOverToEmittedContender) {
  // LLVM code holds A fast-locked; emitted code contends (E5 fails, the
  // runtime inflates with an anonymous owner and parks); the LLVM exit's X4
  // fails, and the runtime fixes the owner and hands A to the emitted code.
  for (const Assignment &As : sampleAssignmentsOfBothForms()) {
    SCOPED_TRACE(As.str());
    void *A = object();
    uint64_t Counter = 0;
    Gate G;
    Worker Holder, Contender;
    Holder.post([&] { callJit(LlvmHold, A, &Gate::callback, (void *)&G); });
    ASSERT_TRUE(waitUntil([&] { return G.Inside.load(); }));
    jitlock_lock_info I = inspect(A);
    EXPECT_EQ(I.state, JITLOCK_STATE_FAST);
    EXPECT_EQ(I.owner, Holder.thread());

    RuntimeShim Shim(hostVecLevel());
    Program Enter(As, {{OpKind::Enter, 0}, {OpKind::Inc, 0}},
                  SlowPathMode::OutOfLine, Shim.entries());
    Program Exit(As, {{OpKind::Exit, 0}}, SlowPathMode::Labels, Shim.entries());
    ProgramCtx Ctx;
    Ctx.Thread = Contender.thread();
    Ctx.Remaining = 1;
    Ctx.Objs[0] = A;
    Ctx.Counters[0] = &Counter;
    Contender.post([&] { Enter.run(Ctx); });
    ASSERT_TRUE(waitEntryQueued(A)) << jitlock_test::describe(A);
    I = inspect(A);
    EXPECT_EQ(I.state, JITLOCK_STATE_INFLATED);
    EXPECT_EQ(I.anonymous_owner, 1u) << jitlock_test::describe(A);

    G.Open.store(true);
    ASSERT_TRUE(Holder.join());
    ASSERT_TRUE(Contender.join());
    I = inspect(A);
    EXPECT_EQ(I.owner, Contender.thread()) << jitlock_test::describe(A);
    EXPECT_EQ(I.holds, 1u);
    EXPECT_EQ(Counter, 1u);
    EXPECT_EQ(Shim.enters(), 1u);
    Ctx.Remaining = 1;
    Contender.call([&] { Exit.run(Ctx); });
    expectReleased(A, "after the emitted exit");
    EXPECT_EQ(Shim.misaligned(), 0u);
    if (HasFailure())
      return;
  }
}

TEST_F(MixedTierTest, EmittedHolderHandsOverToLlvmContender) {
  // The other way: emitted code holds A (recursively); LLVM code contends;
  // the emitted outermost exit fails X4 and the runtime hands over.
  for (const Assignment &As : sampleAssignmentsOfBothForms()) {
    SCOPED_TRACE(As.str());
    void *A = object();
    uint64_t Counter = 0;
    RuntimeShim Shim(hostVecLevel());
    Program Enter(As, {{OpKind::Enter, 0}}, SlowPathMode::Labels,
                  Shim.entries());
    Program Exit(As, {{OpKind::Exit, 0}}, SlowPathMode::OutOfLine,
                 Shim.entries());
    Worker Holder, Contender;
    ProgramCtx Ctx;
    Ctx.Thread = Holder.thread();
    Ctx.Objs[0] = A;
    Ctx.Remaining = 2;
    Holder.call([&] { Enter.run(Ctx); });
    jitlock_lock_info I = inspect(A);
    EXPECT_EQ(I.state, JITLOCK_STATE_FAST);
    EXPECT_EQ(I.holds, 2u);

    Contender.post([&] { callJit(LlvmSimple, A, &Counter, int64_t(1)); });
    ASSERT_TRUE(waitEntryQueued(A)) << jitlock_test::describe(A);
    EXPECT_EQ(inspect(A).anonymous_owner, 1u);

    Ctx.Remaining = 1; // X3: recursive, inline
    Holder.call([&] { Exit.run(Ctx); });
    EXPECT_EQ(Shim.exits(), 0u);
    EXPECT_FALSE(Contender.finished());
    Ctx.Remaining = 1; // X4 fails: the runtime fixes the owner, hands over
    Holder.call([&] { Exit.run(Ctx); });
    EXPECT_EQ(Shim.exits(), 1u);
    ASSERT_TRUE(Contender.join());
    EXPECT_EQ(Counter, 1u);
    EXPECT_EQ(lockStack(Holder.thread()).size(), 0u);
    expectReleased(A, "after the LLVM exit");
    EXPECT_EQ(Shim.misaligned(), 0u);
    if (HasFailure())
      return;
  }
}

} // namespace
