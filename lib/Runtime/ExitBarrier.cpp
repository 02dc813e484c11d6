//===- ExitBarrier.cpp - membarrier registration and the join barrier -----===//
#include "ExitBarrier.h"

#include "Config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jitlock {

static long membarrier(int Cmd) { return syscall(__NR_membarrier, Cmd, 0, 0); }

uint32_t defaultInflatedExit() {
  return membarrierAvailable() ? JITLOCK_EXIT_STORE : JITLOCK_EXIT_FENCE;
}

bool membarrierAvailable() {
  static const bool Available = [] {
    long Supported = membarrier(MEMBARRIER_CMD_QUERY);
    if (Supported < 0 || !(Supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
      return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return Available;
}

uint32_t resolveInflatedExit(uint32_t Requested, int &Status) {
  Status = JITLOCK_OK;
  switch (Requested) {
  case JITLOCK_EXIT_AUTO:
    return defaultInflatedExit();
  case JITLOCK_EXIT_STORE:
    if (membarrierAvailable())
      return JITLOCK_EXIT_STORE;
    break;
  case JITLOCK_EXIT_FENCE:
    return JITLOCK_EXIT_FENCE;
  }
  Status = JITLOCK_EINVAL;
  return JITLOCK_EXIT_FENCE;
}

std::atomic<void (*)()> JoinBarrierTestHook{nullptr};

void joinBarrier() {
#ifdef JITLOCK_MUTATE_J2 // scripts/mutate.sh
  return;
#endif
  if (inflatedExit() == JITLOCK_EXIT_FENCE) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  } else if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
    // Registered before STORE was chosen; it cannot fail now. If it somehow
    // did, sleeping without the barrier could strand this thread for good.
    fprintf(stderr,
            "jitlock: fatal: membarrier failed after registration: %s\n",
            strerror(errno));
    abort();
  }
  if (void (*Hook)() = JoinBarrierTestHook.load(std::memory_order_relaxed))
    Hook();
}

} // namespace jitlock
