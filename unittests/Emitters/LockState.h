//===- LockState.h - What a released lock looks like ------------*- C++ -*-===//
//
// For the emitter tests of every target: it needs only the runtime's C ABI
// and GoogleTest, so the AArch64 cross build compiles it as it is.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_LOCKSTATE_H
#define JITLOCK_UNITTESTS_EMITTERS_LOCKSTATE_H

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <string>

namespace emit_test {

/// What a lock looks like when nobody holds, waits for or queues on it.
inline void expectReleased(const void *Obj, const std::string &What) {
  jitlock_lock_info I{};
  ASSERT_EQ(jitlock_rt_inspect(Obj, &I), JITLOCK_OK) << What;
  EXPECT_TRUE(I.state == JITLOCK_STATE_UNLOCKED ||
              I.state == JITLOCK_STATE_INFLATED)
      << What << ": state " << I.state;
  EXPECT_EQ(I.owner, nullptr) << What;
  EXPECT_EQ(I.anonymous_owner, 0u) << What;
  EXPECT_EQ(I.holds, 0u) << What;
  EXPECT_EQ(I.entry_queued, 0u) << What;
  EXPECT_EQ(I.waiting, 0u) << What;
}

} // namespace emit_test

#endif // JITLOCK_UNITTESTS_EMITTERS_LOCKSTATE_H
