//===- Watchdog.h - Ends a test that stopped making progress -----*- C++
//-*-===//
//
// A thread stuck in the runtime (a lost wake-up, a safepoint waiting for a
// loop that never polls) would hang a test until CTest's timeout, with no
// word about where. A Watchdog gives each phase of a test a time limit;
// phase() starts the next one and the clock again. When a phase runs out,
// `OnStuck(phase)` reports what it can from the watchdog's thread, and the
// process ends: the handler exits or aborts, or the watchdog aborts after it.
//
// Free of GoogleTest, so that the cross-built AArch64 harnesses use it too.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_WATCHDOG_H
#define JITLOCK_UNITTESTS_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace jitlock_test {

class Watchdog {
public:
  using Handler = std::function<void(const std::string &Phase)>;

  Watchdog(std::chrono::seconds Limit, std::string Phase, Handler OnStuck)
      : Limit(Limit), Phase(std::move(Phase)), OnStuck(std::move(OnStuck)),
        Thread([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> Lock(M);
      Done = true;
    }
    CV.notify_all();
    Thread.join();
  }
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Names the next phase and starts its clock.
  void phase(std::string What) {
    std::lock_guard<std::mutex> Lock(M);
    Phase = std::move(What);
    ++Generation;
    CV.notify_all();
  }

private:
  void watch() {
    std::unique_lock<std::mutex> Lock(M);
    while (!Done) {
      uint64_t Seen = Generation;
      if (!CV.wait_for(Lock, Limit,
                       [&] { return Done || Generation != Seen; })) {
        std::string Stuck = Phase;
        Lock.unlock();
        OnStuck(Stuck);
        std::abort();
      }
    }
  }

  std::chrono::seconds Limit;
  std::mutex M;
  std::condition_variable CV;
  bool Done = false;
  uint64_t Generation = 0;
  std::string Phase;
  Handler OnStuck;
  std::thread Thread; // last: started once the rest is constructed
};

} // namespace jitlock_test

#endif
