//===- AssertTest.cpp - The runtime's checked invariants ------------------===//
//
// Death tests of JITLOCK_ASSERT through the lock stack's preconditions and
// validate(): each misuse aborts with a message that names the protocol step
// it guards. Skipped where assertions are compiled out (NDEBUG without
// JITLOCK_ASSERTIONS); the debug preset runs them. The lock stack lives in a
// jitlock_thread of the test's own, so no runtime thread is involved.
//
//===----------------------------------------------------------------------===//
#include "Assert.h"
#include "Thread.h"

#include <gtest/gtest.h>

#include <memory>

using jitlock::LockStack;

namespace {

class AssertTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!jitlock::AssertionsEnabled)
      GTEST_SKIP() << "assertions are compiled out (NDEBUG)";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    Thread = std::make_unique<jitlock_thread>();
    Thread->Attached = 1;
    Thread->LockStackSentinel = jitlock::LockStackSentinel;
    Thread->LockStackTop = LockStack::baseOffset();
  }

  /// Distinct non-null objects; the lock stack never dereferences them.
  void *object(int I) { return &Objects[I]; }

  std::unique_ptr<jitlock_thread> Thread;
  long Objects[16] = {};
};

TEST_F(AssertTest, PushOnAFullLockStackNamesE2) {
  LockStack LS(*Thread);
  for (unsigned I = 0; I != jitlock::LockStackCapacity; ++I)
    LS.push(object(int(I)));
  ASSERT_TRUE(LS.isFull());
  EXPECT_DEATH(LS.push(object(15)),
               "assertion failed at step E2: push on a full lock stack");
}

TEST_F(AssertTest, PopOfAnotherObjectNamesX2) {
  LockStack LS(*Thread);
  LS.push(object(0));
  LS.push(object(1));
  EXPECT_DEATH(LS.pop(object(0)), "assertion failed at step X2: pop of an "
                                  "object that is not the top entry");
  LS.pop(object(1));
  LS.pop(object(0));
  EXPECT_DEATH(LS.pop(object(0)),
               "assertion failed at step X2: pop of an empty lock stack");
}

TEST_F(AssertTest, ValidateAcceptsAdjacentRecursion) {
  LockStack LS(*Thread);
  LS.push(object(0));
  LS.push(object(0));
  LS.push(object(1));
  LS.push(object(1));
  LS.validate();
  EXPECT_EQ(LS.removeAll(object(0)), 2u);
  EXPECT_EQ(LS.size(), 2u);
  EXPECT_EQ(LS.top(), object(1));
}

TEST_F(AssertTest, ValidateRejectsNonAdjacentEntriesAndABadTop) {
  LockStack LS(*Thread);
  LS.push(object(0));
  LS.push(object(1));
  // A B A: re-entry that E4 would have inflated instead.
  Thread->LockStackSlots[2] = object(0);
  Thread->LockStackTop += 8;
  EXPECT_DEATH(LS.validate(), "assertion failed at step E4: an object's lock "
                              "stack entries are not adjacent");
  Thread->LockStackTop = LockStack::baseOffset() + 4;
  EXPECT_DEATH(LS.validate(), "step E2: lock stack top not 8-aligned");
  Thread->LockStackTop = LockStack::baseOffset() + 8;
  Thread->LockStackSlots[0] = nullptr;
  EXPECT_DEATH(LS.validate(), "step E5: null or sentinel entry");
}

TEST_F(AssertTest, ADetachedThreadsLockStackReadsAsFull) {
  Thread->Attached = 0;
  LockStack LS(*Thread);
  EXPECT_DEATH(LS.validate(), "step E2: a detached thread's lock stack");
  Thread->LockStackTop = LockStack::endOffset();
  LS.validate();
}

} // namespace
