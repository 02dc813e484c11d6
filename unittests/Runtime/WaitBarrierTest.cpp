//===- WaitBarrierTest.cpp - The WaitBarrier on its own -------------------===//
//
// The WaitBarrier is a runtime-internal component with no C ABI: these tests
// include its header directly.
//
//===----------------------------------------------------------------------===//
#include "WaitBarrier.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

using jitlock::WaitBarrier;

namespace {

bool eventually(std::atomic<int> &Value, int Want) {
  auto End = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Value.load() != Want)
    if (std::chrono::steady_clock::now() > End)
      return false;
    else
      std::this_thread::yield();
  return true;
}

TEST(WaitBarrierTest, WaitReturnsAtOnceUnlessArmedWithTheTag) {
  WaitBarrier B;
  B.wait(1); // disarmed
  B.wait(0);
  B.arm(3);
  EXPECT_EQ(B.armedTag(), 3u);
  B.wait(5); // another tag: a late waiter from an earlier round
  B.wait(0);
  B.disarm();
  EXPECT_EQ(B.armedTag(), 0u);
  B.wait(3); // disarmed since
}

TEST(WaitBarrierTest, DisarmReleasesEveryWaiter) {
  constexpr int Waiters = 8;
  WaitBarrier B;
  B.arm(7);
  std::atomic<int> Arrived{0}, Left{0};
  std::vector<std::thread> Threads;
  for (int I = 0; I < Waiters; ++I)
    Threads.emplace_back([&] {
      Arrived.fetch_add(1);
      B.wait(7);
      Left.fetch_add(1);
    });
  ASSERT_TRUE(eventually(Arrived, Waiters));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Left.load(), 0) << "a waiter passed an armed barrier";
  B.disarm();
  EXPECT_TRUE(eventually(Left, Waiters));
  for (auto &T : Threads)
    T.join();
}

// Round after round, as safepoints use it: no waiter passes a round's
// barrier before that round is disarmed, and every one passes after.
TEST(WaitBarrierTest, RoundsNeverLetAWaiterThrough) {
  constexpr int Waiters = 4, Rounds = 300;
  WaitBarrier B;
  std::atomic<int> Round{-1}, Arrived{0};
  std::atomic<int> Released{-1}; // the last round the armer disarmed
  std::atomic<int> Early{0};
  std::vector<std::thread> Threads;
  for (int I = 0; I < Waiters; ++I)
    Threads.emplace_back([&] {
      for (int R = 0; R < Rounds; ++R) {
        while (Round.load() != R)
          std::this_thread::yield();
        Arrived.fetch_add(1);
        B.wait(uint32_t(2 * R + 1));
        if (Released.load() < R)
          Early.fetch_add(1);
      }
    });
  for (int R = 0; R < Rounds; ++R) {
    B.arm(uint32_t(2 * R + 1));
    Arrived = 0;
    Round = R;
    ASSERT_TRUE(eventually(Arrived, Waiters)) << "round " << R;
    Released = R;
    B.disarm();
  }
  for (auto &T : Threads)
    T.join();
  EXPECT_EQ(Early.load(), 0);
}

} // namespace
