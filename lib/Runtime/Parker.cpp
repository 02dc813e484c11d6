//===- Parker.cpp - Blocking a thread on a futex word ---------------------===//
#include "Parker.h"

#include <cerrno>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jitlock {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futex words must be plain 32-bit words");

uint64_t monotonicNowNs() {
  timespec Now;
  clock_gettime(CLOCK_MONOTONIC, &Now);
  return uint64_t(Now.tv_sec) * 1000000000u + uint64_t(Now.tv_nsec);
}

bool parkWhile(std::atomic<uint32_t> &Word, uint32_t Value,
               uint64_t DeadlineNs) {
  timespec Timeout;
  timespec *TimeoutPtr = nullptr;
  if (DeadlineNs != 0) {
    uint64_t Now = monotonicNowNs();
    if (Now >= DeadlineNs)
      return false;
    uint64_t Left = DeadlineNs - Now;
    Timeout.tv_sec = time_t(Left / 1000000000u);
    Timeout.tv_nsec = long(Left % 1000000000u);
    TimeoutPtr = &Timeout;
  }
  // FUTEX_WAIT rechecks the word in the kernel, so a wake between our load
  // of the condition and this call is not lost.
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&Word), FUTEX_WAIT_PRIVATE,
          Value, TimeoutPtr, nullptr, 0);
  return DeadlineNs == 0 || monotonicNowNs() < DeadlineNs;
}

void wakeAll(std::atomic<uint32_t> &Word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&Word), FUTEX_WAKE_PRIVATE,
          INT32_MAX, nullptr, nullptr, 0);
}

} // namespace jitlock
