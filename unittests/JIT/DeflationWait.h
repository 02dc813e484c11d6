//===- DeflationWait.h - Waiting for the deflation thread's cycle -*- C++
//-*-===//
//
// A JIT test that runs an example under the deflation thread and then checks
// that the thread ran: the run can end before the thread's first period
// does, so the check first gives it time for one cycle. The caller must not
// be attached and managed (a cycle's handshake would wait for it).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_JIT_DEFLATIONWAIT_H
#define JITLOCK_UNITTESTS_JIT_DEFLATIONWAIT_H

#include "jitlock/jitlock_rt.h"

#include <chrono>
#include <cstdint>
#include <thread>

namespace jitlock_test {

/// Waits, up to 10 s, until the deflation thread has run more cycles than
/// `Since` (a thread_cycles count); returns whether it did.
inline bool waitForDeflationCycle(uint64_t Since) {
  for (int Ms = 0; Ms < 10000; ++Ms) {
    jitlock_deflation_stats Now{};
    jitlock_rt_get_deflation_stats(&Now);
    if (Now.thread_cycles > Since)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

} // namespace jitlock_test

#endif
