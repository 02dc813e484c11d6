//===- jitlock-bench/InflateChurnBench.cpp - Concurrent inflation ---------===//
//
// inflate-churn/<storage>, one run per monitor storage (pointer, index,
// table): what monitor allocation and registration cost when several
// threads inflate at once. 4 attached threads, on the runtime configured for
// heavy monitors, each lock and unlock the objects of their own arena (32768
// objects) through the runtime's C API, one after the other: with heavy
// monitors every enter of an object without a monitor inflates it. A thread
// that reaches the end of its arena runs a deflation cycle (the "GC", as in
// churn) and starts over, so every pair inflates a monitor taken from a
// free list and every monitor is deflated again. Only the pairs are timed
// (manual time), not the cycles, whose wall time is mostly their
// handshake's wait for every thread to be scheduled. Between benchmark
// iterations each thread is native, where the cycles' handshakes reach it.
//
// Counters: pairs_per_s (all threads together, over the timed pairs),
// ns_per_pair (the timed time per pair that each thread sees),
// inflations_per_pair, monitors_allocated (the runtime's, so far) and
// monitors_alive after the final deflation (0). The run fails unless every pair
// incremented its object once.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "jitlock/jitlock_rt.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

namespace jitlock::bench {

namespace {

constexpr unsigned Inflaters = 4;
constexpr uint64_t ObjectsPerThread = 32768;

struct Run {
  Object *Arenas[Inflaters] = {};
  std::atomic<unsigned> Finished{0};
  std::atomic<uint64_t> Pairs{0};
  std::atomic<bool> Failed{false};
  jitlock_rt_stats StartStats{};
  std::string Error;
};
Run Current;

template <uint32_t Storage> void setup(const benchmark::State &) {
  Run &R = Current;
  R.Error.clear();
  R.Finished = 0;
  R.Pairs = 0;
  R.Failed = false;
  if (int RC = setRuntimeConfig(JITLOCK_LOCKING_HEAVY, Storage)) {
    R.Error = std::string("cannot configure heavy monitors in ") +
              storageName(Storage) + " storage: " + jitlock_rt_status_name(RC);
    return;
  }
  for (Object *&A : R.Arenas) {
    if (!A)
      A = static_cast<Object *>(
          aligned_alloc(alignof(Object), ObjectsPerThread * sizeof(Object)));
    for (uint64_t I = 0; I < ObjectsPerThread; ++I)
      resetObject(A[I]);
  }
  jitlock_rt_get_stats(&R.StartStats);
}

void runInflateChurn(benchmark::State &St) {
  Run &R = Current;
  std::string Error = R.Error;
  jitlock_thread *T = attachOrSkip(St, Error, R.Finished);
  if (!T)
    return;
  Object *Arena = R.Arenas[St.thread_index()];
  uint64_t Next = 0;
  bool Failed = false;
  // Native between iterations: Google Benchmark's barriers would otherwise
  // keep a thread from the handshake of another thread's cycle.
  jitlock_rt_enter_native(T);
  for (auto _ : St) {
    jitlock_rt_leave_native(T);
    if (Next + PairsPerIteration > ObjectsPerThread) {
      jitlock_rt_deflate_idle();
      Next = 0;
    }
    // Only the pairs are timed: the cycle's wait for every thread's
    // handshake is the scheduler's more than the runtime's.
    auto Start = std::chrono::steady_clock::now();
    for (uint64_t I = 0; I < PairsPerIteration; ++I) {
      Object *O = &Arena[Next++];
      Failed |= jitlock_rt_monitor_enter(T, O) != JITLOCK_OK;
      ++O->Payload;
      Failed |= jitlock_rt_monitor_exit(T, O) != JITLOCK_OK;
    }
    St.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count());
    jitlock_rt_enter_native(T);
  }
  jitlock_rt_leave_native(T);
  R.Pairs.fetch_add(uint64_t(St.iterations()) * PairsPerIteration);
  if (Failed)
    R.Failed = true;
  if (detachAndGather(St, Error, R.Finished)) {
    const uint64_t AllPairs = R.Pairs.load();
    jitlock_rt_stats End{};
    jitlock_rt_get_stats(&End);
    uint64_t Increments = 0;
    for (Object *A : R.Arenas)
      for (uint64_t I = 0; I < ObjectsPerThread; ++I)
        Increments += A[I].Payload;
    if (R.Failed)
      Error = "a runtime call failed";
    else if (Increments != AllPairs)
      Error = "lost updates: the objects were incremented " +
              std::to_string(Increments) + " times, expected " +
              std::to_string(AllPairs);
    // Every thread detached: the last cycle needs none.
    jitlock_rt_deflate_idle();
    jitlock_rt_stats After{};
    jitlock_rt_get_stats(&After);
    St.counters["inflations_per_pair"] =
        AllPairs ? double(End.inflations - R.StartStats.inflations) /
                       double(AllPairs)
                 : 0.0;
    St.counters["monitors_alive"] = double(After.monitors_alive);
    jitlock_deflation_stats D{};
    jitlock_rt_get_deflation_stats(&D);
    St.counters["monitors_allocated"] = double(D.monitors_allocated);
    St.counters["pairs_per_s"] =
        benchmark::Counter(double(AllPairs), benchmark::Counter::kIsRate);
  }
  St.counters["ns_per_pair"] = benchmark::Counter(
      double(St.iterations()) * PairsPerIteration * 1e-9,
      benchmark::Counter::kAvgThreadsRate | benchmark::Counter::kInvert);
  if (!Error.empty())
    St.SkipWithError(Error.c_str());
}

} // namespace

void registerInflateChurnBenchmarks() {
  forEachStorage([](auto Storage) {
    benchmark::RegisterBenchmark(
        (std::string("inflate-churn/") + storageName(Storage)).c_str(),
        runInflateChurn)
        ->Threads(Inflaters)
        ->UseManualTime()
        ->Setup(setup<Storage>)
        ->Teardown(restoreDefaultConfig);
  });
}

} // namespace jitlock::bench
