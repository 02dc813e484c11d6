//===- WaitBarrier.h - Release every waiting thread at once -----*- C++ -*-===//
//
// A barrier that one thread arms with a tag and later disarms; threads that
// wait with the armed tag sleep until the disarm, and all of them are woken
// by one futex call. Waiting with any other tag returns at once, so a thread
// that arrives late, with the tag of a barrier already disarmed, never
// sleeps. The safepoint synchronizer arms it with the safepoint id.
//
// Usable on its own: arm(), disarm() and wait() are all it has.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_WAITBARRIER_H
#define JITLOCK_RUNTIME_WAITBARRIER_H

#include <atomic>
#include <cstdint>

namespace jitlock {

class WaitBarrier {
public:
  /// Arms the barrier with `Tag`, which must be nonzero. Only the thread
  /// that arms it disarms it, and it is not armed twice in a row.
  void arm(uint32_t Tag);
  /// Releases every thread waiting with the armed tag.
  void disarm();
  /// Sleeps while the barrier is armed with `Tag`; returns at once when it
  /// is not. Spurious futex wake-ups are absorbed here.
  void wait(uint32_t Tag);

  /// The armed tag, or 0.
  uint32_t armedTag() const { return Tag.load(std::memory_order_acquire); }

private:
  /// The futex word: the armed tag, 0 while disarmed.
  std::atomic<uint32_t> Tag{0};
};

} // namespace jitlock

#endif
