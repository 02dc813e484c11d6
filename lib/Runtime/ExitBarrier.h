//===- ExitBarrier.h - Ordering an inflated exit against parkers -*- C++
//-*-===//
//
// An inflated exit (N3 in Synchronizer.cpp) stores 0 to the owner word and
// then loads the entry count; a thread joining the entry queue (J1-J3)
// increments the count and then loads the owner word. Each needs its store
// ordered before its load, or both can miss the other and the joiner sleeps
// on a free monitor. The exit runs on every unlock, the join only before a
// park, so the cost goes to the join where the kernel allows it:
//
//   store  the exit has no fence; the joiner runs
//          membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which executes a
//          full fence on every CPU running a thread of this process (and a
//          thread that is not running passes a context switch, a full fence,
//          before it runs again).
//   fence  both sides issue a full fence; where membarrier is missing.
//
// Config.inflated_exit picks one (JITLOCK_EXIT_AUTO: store when membarrier
// registers). It changes only while no thread is attached.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_EXITBARRIER_H
#define JITLOCK_RUNTIME_EXITBARRIER_H

#include "Config.h"
#include "jitlock/jitlock_rt.h"

#include <atomic>

namespace jitlock {

/// Whether this process has registered for private expedited membarrier;
/// tries once, on the first call.
bool membarrierAvailable();

/// What `Requested` (a jitlock_inflated_exit) resolves to here: STORE or
/// FENCE. JITLOCK_EINVAL in `Status` when STORE is asked for and membarrier
/// is missing, or the value is unknown.
uint32_t resolveInflatedExit(uint32_t Requested, int &Status);

/// What JITLOCK_EXIT_AUTO means in this process: STORE when membarrier
/// works, else FENCE.
uint32_t defaultInflatedExit();

/// The exit in use: JITLOCK_EXIT_STORE or JITLOCK_EXIT_FENCE. Inline: every
/// inflated exit asks (N3).
inline uint32_t inflatedExit() {
  // Config.inflated_exit as configure resolved it.
  if (Config.inflated_exit != JITLOCK_EXIT_AUTO)
    return Config.inflated_exit;
  return defaultInflatedExit();
}

/// N3's barrier between the release store and the entry count's load.
inline void exitBarrier() {
  if (inflatedExit() == JITLOCK_EXIT_FENCE)
    std::atomic_thread_fence(std::memory_order_seq_cst);
  else
    std::atomic_signal_fence(std::memory_order_seq_cst);
}

/// J2: the joiner's half, between its count and its load of the owner.
void joinBarrier();

/// For tests only: called at the end of joinBarrier, once the barrier has
/// run. A test models with it what J2 guarantees, that an exiter's release
/// store made before the barrier is visible after it. Null: one relaxed load
/// per join.
extern std::atomic<void (*)()> JoinBarrierTestHook;

} // namespace jitlock

#endif
