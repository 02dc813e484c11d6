//===- ReservedJitTest.cpp - LLVM-lowered reserved enter and exit -------===//
//
// The lowering's locking=reserved (lib/Passes/LowerMonitors.cpp), compiled
// by the JIT against a runtime configured for JITLOCK_LOCKING_RESERVED, run
// on objects whose headers the test puts in the reserved state, as the
// runtime's R2 would: R1 and R4 keep the header bit-identical and call no
// runtime; a reservable header is reserved inline (R2); one reserved to
// another thread reaches the runtime; a reservation revoked while held (once or
// recursively) is released by X4 at the outermost exit only; and threads each
// holding their own reserved object lose no increment of a shared unreserved
// one.
//
//===----------------------------------------------------------------------===//
#include "LoweredPair.h"

#include "../Runtime/RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace {

using jitlock::LockingMode;
using jitlock_test::LoweredPair;

class ReservedJit : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    jitlock_rt_config C;
    jitlock_rt_default_config(&C);
    C.locking_mode = JITLOCK_LOCKING_RESERVED;
    C.reserve_shift = 40;
    C.reserve_bits = 16;
    Configured = jitlock_rt_configure(&C) == JITLOCK_OK;
    jitlock_rt_get_layout(&L);
  }
  void SetUp() override {
    ASSERT_TRUE(Configured);
    ASSERT_EQ(L.reserve_bits, 16u);
    Self = jitlock_rt_attach();
    ASSERT_NE(Self, nullptr);
    Pair = std::make_unique<LoweredPair>(LockingMode::Reserved);
    ASSERT_NE(Pair->Lock, nullptr);
  }
  void TearDown() override {
    Pair.reset();
    jitlock_rt_detach();
  }

  static uint64_t tagOf(const jitlock_thread *T) {
    return *reinterpret_cast<const uint64_t *>(
        reinterpret_cast<const char *>(T) + L.reserve_tag_offset);
  }
  static uint64_t slowCalls() { return jitlock_test::stats().slow_path_calls; }
  static uint64_t &header(jitlock_test::Obj &O) {
    return *reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(&O) +
                                         L.header_offset);
  }

  static inline bool Configured = false;
  static inline jitlock_rt_layout L;
  jitlock_thread *Self = nullptr;
  std::unique_ptr<LoweredPair> Pair;
};

constexpr uint64_t EmbedderBits = uint64_t(1) << 60;

TEST_F(ReservedJit, ReservedToSelfTakesNoRuntimeCall) {
  jitlock_test::Obj O;
  const uint64_t Mine = EmbedderBits | tagOf(Self);
  header(O) = Mine;
  const uint64_t Before = slowCalls();
  for (int I = 0; I != 3; ++I)
    Pair->Lock(&O);
  EXPECT_EQ(jitlock_test::lockStack(Self).size(), 3u);
  EXPECT_EQ(header(O), Mine);
  for (int I = 0; I != 3; ++I)
    Pair->Unlock(&O);
  EXPECT_EQ(header(O), Mine);
  EXPECT_TRUE(jitlock_test::lockStack(Self).empty());
  EXPECT_EQ(slowCalls(), Before) << "R1 or R4 called the runtime";
}

TEST_F(ReservedJit, AHeaderReservedToAnotherThreadGoesToTheRuntime) {
  const uint64_t Ones = ~uint64_t(0) >> (64 - L.reserve_bits);
  const uint64_t Index = (tagOf(Self) >> L.reserve_shift) & Ones;
  // An index no thread holds: reserved to a thread that is not there.
  const uint64_t Other = (Index + 100) % (Ones - 1) + 1;
  const uint64_t Header =
      EmbedderBits | L.unlocked_value | Other << L.reserve_shift;
  jitlock_test::Obj O;
  header(O) = Header;
  const uint64_t Before = slowCalls();
  Pair->Lock(&O);
  EXPECT_GT(slowCalls(), Before)
      << std::hex << Header << ": fast-locked inline, not by the runtime";
  EXPECT_TRUE(jitlock_rt_holds_lock(Self, &O));
  Pair->Unlock(&O);
  EXPECT_FALSE(jitlock_rt_holds_lock(Self, &O));
}

TEST_F(ReservedJit, AReservableHeaderIsReservedInline) {
  jitlock_test::Obj O;
  header(O) = EmbedderBits | L.unlocked_value | L.reservable_value;
  const uint64_t Mine = EmbedderBits | tagOf(Self);
  const uint64_t Before = slowCalls();
  Pair->Lock(&O); // R2
  EXPECT_EQ(header(O), Mine) << "R2 did not reserve the object";
  EXPECT_TRUE(jitlock_rt_holds_lock(Self, &O));
  Pair->Unlock(&O); // R4
  Pair->Lock(&O);   // R1
  Pair->Unlock(&O);
  EXPECT_EQ(header(O), Mine);
  EXPECT_FALSE(jitlock_rt_holds_lock(Self, &O));
  EXPECT_EQ(slowCalls(), Before) << "R2, R1 or R4 called the runtime";
}

TEST_F(ReservedJit, AThreadThatMayNotReserveLeavesR2ToTheRuntime) {
  // The tag of a thread past the field's indices (~0); restored after.
  uint64_t &Tag = *reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(Self) +
                                                L.reserve_tag_offset);
  const uint64_t Saved = Tag;
  Tag = ~uint64_t(0);
  jitlock_test::Obj O;
  header(O) = EmbedderBits | L.unlocked_value | L.reservable_value;
  const uint64_t Before = slowCalls();
  Pair->Lock(&O);
  const uint64_t Held = header(O);
  Pair->Unlock(&O);
  Tag = Saved;
  EXPECT_GT(slowCalls(), Before) << "R2 ran for a thread that may not reserve";
  EXPECT_EQ(Held & ~L.reserve_mask, EmbedderBits)
      << std::hex << Held << ": the embedder's bits changed";
  EXPECT_FALSE(jitlock_rt_holds_lock(Self, &O));
}

TEST_F(ReservedJit, RevokedWhileHeldIsReleasedByTheOutermostExit) {
  jitlock_test::Obj O;
  const uint64_t Mine = EmbedderBits | tagOf(Self);
  const uint64_t Fast = EmbedderBits, Unlocked = EmbedderBits | 1;
  header(O) = Mine;
  Pair->Lock(&O);
  Pair->Lock(&O);
  header(O) = Fast; // what the revocation leaves for a held object
  Pair->Unlock(&O);
  EXPECT_EQ(header(O), Fast) << "the inner exit unlocked a revoked hold";
  EXPECT_TRUE(jitlock_rt_holds_lock(Self, &O));
  Pair->Unlock(&O);
  EXPECT_EQ(header(O), Unlocked);
  EXPECT_FALSE(jitlock_rt_holds_lock(Self, &O));
}

TEST_F(ReservedJit, ThreadsHoldTheirOwnAndShareAnUnreservedObject) {
  const uint64_t Seed =
      jitlock_test::seedFromEnv("ReservedJit", "JITLOCK_TEST_SEED");
  constexpr unsigned Threads = 8, Iterations = 20000;
  jitlock_test::Obj Shared;
  header(Shared) = EmbedderBits | L.unlocked_value;
  uint64_t SharedCount = 0;
  std::atomic<uint64_t> Expected{0}, Failures{0};
  std::vector<std::thread> Workers;
  for (unsigned T = 0; T != Threads; ++T)
    Workers.emplace_back([&, T] {
      jitlock_thread *Me = jitlock_rt_attach();
      if (!Me) {
        ++Failures;
        return;
      }
      std::mt19937_64 Rng(Seed + T);
      jitlock_test::Obj Own;
      const uint64_t Mine = EmbedderBits | tagOf(Me);
      // Half of them reserved by their first lock (R2), half beforehand.
      header(Own) =
          T % 2 ? EmbedderBits | L.unlocked_value | L.reservable_value : Mine;
      uint64_t Shares = 0;
      for (unsigned I = 0; I != Iterations; ++I) {
        Pair->Lock(&Own);
        Pair->Lock(&Own);
        if (Rng() % 4 == 0) {
          Pair->Lock(&Shared);
          // A load and a store, not an increment: a broken lock loses
          // updates. Relaxed atomics, because the lock is JIT code that the
          // race detector cannot see into.
          std::atomic_ref<uint64_t> Count(SharedCount);
          Count.store(Count.load(std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
          Pair->Unlock(&Shared);
          ++Shares;
        }
        Pair->Unlock(&Own);
        Pair->Unlock(&Own);
        if (header(Own) != Mine)
          ++Failures;
      }
      Expected += Shares;
      if (!jitlock_test::lockStack(Me).empty())
        ++Failures;
      jitlock_rt_detach();
    });
  for (std::thread &W : Workers)
    W.join();
  EXPECT_EQ(Failures.load(), 0u) << "seed " << Seed;
  EXPECT_EQ(SharedCount, Expected.load()) << "seed " << Seed;
}

} // namespace
