//===- ThreadLoadScenarios.h - emitLoadThread on many threads ---*- C++ -*-===//
//
// The scenario both targets run on their emitLoadThread code
// (ThreadLoadTest.cpp natively, A64ThreadLoadTest.cpp under qemu-aarch64). Each
// supplies a function that runs the emitted load and returns the register's
// value. Needs nothing but the runtime's C ABI, GoogleTest and the standard
// library.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_THREADLOADSCENARIOS_H
#define JITLOCK_UNITTESTS_EMITTERS_THREADLOADSCENARIOS_H

#include "jitlock/jitlock_rt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <thread>
#include <vector>

namespace thread_load_scenarios {

inline uint64_t addressOf(const jitlock_thread *T) {
  return reinterpret_cast<uint64_t>(T);
}

/// `Threads` threads at once: each, not attached yet, loads its thread
/// structure (what jitlock_rt_code_thread() returns; jitlock_rt_current()
/// is null), attaches and loads it `Rounds` times (always
/// jitlock_rt_current(), the same address as before attaching), and
/// detaches. Threads alive together get distinct structures.
template <typename LoadFn>
void eachThreadFindsItsOwn(LoadFn Load, unsigned Threads, unsigned Rounds) {
  std::vector<uint64_t> Seen(Threads);
  std::vector<int> Bad(Threads);
  std::vector<std::thread> Ts;
  for (unsigned T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      const uint64_t Before = Load();
      if (jitlock_rt_current() != nullptr ||
          Before != addressOf(jitlock_rt_code_thread()))
        ++Bad[T];
      jitlock_thread *Self = jitlock_rt_attach();
      for (unsigned R = 0; R < Rounds; ++R)
        if (Load() != addressOf(Self))
          ++Bad[T];
      if (addressOf(Self) != Before)
        ++Bad[T];
      Seen[T] = addressOf(Self);
      if (jitlock_rt_detach() != JITLOCK_OK)
        ++Bad[T];
    });
  for (std::thread &T : Ts)
    T.join();
  for (unsigned T = 0; T < Threads; ++T)
    EXPECT_EQ(Bad[T], 0) << "thread " << T;
  EXPECT_EQ(std::set<uint64_t>(Seen.begin(), Seen.end()).size(),
            size_t(Threads));
}

} // namespace thread_load_scenarios

#endif // JITLOCK_UNITTESTS_EMITTERS_THREADLOADSCENARIOS_H
