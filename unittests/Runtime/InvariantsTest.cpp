//===- InvariantsTest.cpp - JITLOCK_ASSERT on lock stack misuse -----------===//
//
// The lock stack's preconditions and validate() abort with the protocol step
// they guard. Death tests: only in builds with assertions (the debug preset);
// elsewhere they skip.
//
//===----------------------------------------------------------------------===//
#include "Assert.h"
#include "Thread.h"
#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

using namespace jitlock;

namespace {

class LockStackInvariantsTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!AssertionsEnabled)
      GTEST_SKIP() << "JITLOCK_ASSERT is compiled out in this build";
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  }
  // Objects only their addresses matter for: the lock stack never reads
  // their headers.
  alignas(8) char Objects[LockStackCapacity + 2][8] = {};
};

TEST_F(LockStackInvariantsTest, PushOnAFullLockStackNamesStepE5) {
  EXPECT_DEATH(
      {
        jitlock_rt_attach();
        LockStack LS(currentThreadStorage());
        for (unsigned I = 0; I != LockStackCapacity + 1; ++I)
          LS.push(Objects[I]);
      },
      "step E5 violated: push on a full lock stack");
}

TEST_F(LockStackInvariantsTest, PopOfTheWrongObjectNamesStepX1) {
  EXPECT_DEATH(
      {
        jitlock_rt_attach();
        LockStack LS(currentThreadStorage());
        LS.push(Objects[0]);
        LS.push(Objects[1]);
        LS.pop(Objects[0]);
      },
      "step X1 violated: pop of an object that is not on top");
}

TEST_F(LockStackInvariantsTest, PopOfAnEmptyLockStackNamesStepX1) {
  EXPECT_DEATH(
      {
        jitlock_rt_attach();
        LockStack(currentThreadStorage()).pop();
      },
      "step X1 violated: pop from an empty lock stack");
}

TEST_F(LockStackInvariantsTest, NonAdjacentEntriesFailValidate) {
  EXPECT_DEATH(
      {
        jitlock_rt_attach();
        LockStack LS(currentThreadStorage());
        LS.push(Objects[0]);
        LS.push(Objects[1]);
        LS.push(Objects[0]); // [A B A]: enter inflates instead (E4).
      },
      "step E4 violated: an object's lock stack entries are not adjacent");
}

// Runs in every build: valid use passes the checks.
TEST(LockStackInvariants, AdjacentRecursionAndBalancedUseAreValid) {
  alignas(8) char Objects[2][8] = {};
  jitlock_rt_attach();
  {
    LockStack LS(currentThreadStorage());
    LS.push(Objects[0]);
    LS.push(Objects[0]);
    LS.push(Objects[1]);
    LS.validate();
    LS.pop(Objects[1]);
    EXPECT_EQ(LS.removeAll(Objects[0]), 2u);
    EXPECT_TRUE(LS.isEmpty());
    LS.validate();
  }
  EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
}

} // namespace
