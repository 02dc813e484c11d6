//===- WaitBarrier.cpp - Release every waiting thread at once -------------===//
#include "WaitBarrier.h"

#include "Parker.h"

#include <cassert>

namespace jitlock {

void WaitBarrier::arm(uint32_t NewTag) {
  assert(NewTag != 0 && "0 means disarmed");
  assert(Tag.load(std::memory_order_relaxed) == 0 && "armed twice");
  Tag.store(NewTag, std::memory_order_release);
}

void WaitBarrier::disarm() {
  // Release: what the armer did while armed happens before every waiter's
  // return. The store comes first, so a waiter either sees 0 or is woken.
  Tag.store(0, std::memory_order_release);
  wakeAll(Tag);
}

void WaitBarrier::wait(uint32_t WaitTag) {
  if (WaitTag == 0)
    return; // No barrier is ever armed with 0.
  // The kernel re-checks the word, so a disarm between the load and the
  // sleep is not missed.
  while (Tag.load(std::memory_order_acquire) == WaitTag)
    parkWhile(Tag, WaitTag, /*DeadlineNs=*/0);
}

} // namespace jitlock
