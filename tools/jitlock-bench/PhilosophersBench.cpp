//===- jitlock-bench/PhilosophersBench.cpp - Many monitors, churning ------===//
//
// philosophers/<storage>, one run per monitor storage (pointer, index,
// table): 4 attached threads run shapes.ll's bench_philosophers, lowered for
// that storage, over a ring of 4096 objects ("forks"). Each pair locks a
// fork and its neighbour, the lower address first, and increments both
// payloads. Thread t picks its forks at random in a window of 2048 starting
// at t * 1024, so every fork is shared by two threads, which contend on it
// and inflate it; meanwhile the runtime's deflation thread deflates every
// idle monitor each millisecond. Monitors are therefore created, entered
// inline through the storage's lookup (M1, N2), deflated and reused all the
// time.
//
// Counters: pairs_per_s (all threads together), peak_rss_mib (the process's
// high-water mark so far), bytes_per_monitor (the resident memory the run
// added, divided by the monitors it added: what a live monitor costs,
// region or table included), inflations_per_pair, deflated_per_pair,
// deflation_cycles, monitors_allocated (the runtime's, so far), and
// monitors_alive after the final deflation (0). The run fails unless every pair
// incremented both of its forks exactly once.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "jitlock/jitlock_rt.h"

#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace jitlock::bench {

namespace {

constexpr uint64_t Forks = 4096;     // a power of two: the ring mask
constexpr unsigned Philosophers = 4; // benchmark threads
constexpr uint64_t Window = 2 * Forks / Philosophers; // a power of two

/// What bench_philosophers reads and updates per thread.
struct alignas(64) PhilosopherState {
  uint64_t Rng;
  uint64_t Base;
  uint64_t WindowMask;
  uint64_t RingMask;
};

struct Run {
  Object *Ring = nullptr;
  PhilosopherState States[Philosophers];
  std::atomic<unsigned> Finished{0};
  std::atomic<uint64_t> Pairs{0};
  jitlock_rt_stats StartStats{};
  jitlock_deflation_stats StartDeflation{};
  uint64_t StartRssBytes = 0;
  std::string Error;
};
Run Current;

/// The resident set now, from /proc/self/statm.
uint64_t residentBytes() {
  FILE *F = std::fopen("/proc/self/statm", "r");
  if (!F)
    return 0;
  unsigned long long Size = 0, Resident = 0;
  int N = std::fscanf(F, "%llu %llu", &Size, &Resident);
  std::fclose(F);
  return N == 2 ? uint64_t(Resident) * uint64_t(sysconf(_SC_PAGESIZE)) : 0;
}

/// Configures the storage, resets the ring, and starts the deflation
/// thread (configure is refused while it runs: the teardown stops it).
template <uint32_t Storage> void setup(const benchmark::State &) {
  Run &R = Current;
  R.Error.clear();
  R.Finished = 0;
  R.Pairs = 0;
  if (int RC = setRuntimeConfig(JITLOCK_LOCKING_LIGHTWEIGHT, Storage)) {
    R.Error = std::string("cannot configure ") + storageName(Storage) +
              " monitor storage: " + jitlock_rt_status_name(RC);
    return;
  }
  if (!R.Ring)
    R.Ring = static_cast<Object *>(
        aligned_alloc(alignof(Object), Forks * sizeof(Object)));
  for (uint64_t I = 0; I < Forks; ++I)
    resetObject(R.Ring[I]);
  for (unsigned T = 0; T < Philosophers; ++T)
    R.States[T] = {0x9E3779B97F4A7C15ull * (T + 1), T * (Forks / Philosophers),
                   Window - 1, Forks - 1};
  jitlock_rt_get_stats(&R.StartStats);
  jitlock_rt_get_deflation_stats(&R.StartDeflation);
  R.StartRssBytes = residentBytes();
  jitlock_deflation_policy P;
  jitlock_rt_default_deflation_policy(&P);
  P.period_ms = 1;
  P.idle_threshold = 1;
  if (int RC = jitlock_rt_start_deflation(&P))
    R.Error = std::string("jitlock_rt_start_deflation: ") +
              jitlock_rt_status_name(RC);
}

void teardown(const benchmark::State &St) {
  jitlock_deflation_stats D{};
  jitlock_rt_get_deflation_stats(&D);
  if (D.thread_running)
    jitlock_rt_stop_deflation();
  restoreDefaultConfig(St);
}

void runPhilosophers(benchmark::State &St, uint32_t Storage) {
  Run &R = Current;
  std::string Error = R.Error;
  KernelFn Fn = nullptr;
  if (Error.empty()) {
    if (LlvmFor[Storage])
      Fn = kernelOf(*LlvmFor[Storage], KPhilosophers, Error);
    else
      Error = StorageError[Storage];
  }
  jitlock_thread *T = attachOrSkip(St, Error, R.Finished);
  if (!T)
    return;
  PhilosopherState &Mine = R.States[St.thread_index()];
  for (auto _ : St)
    callKernel(Fn, T, R.Ring, reinterpret_cast<Object *>(&Mine),
               PairsPerIteration);
  const uint64_t Pairs = uint64_t(St.iterations()) * PairsPerIteration;
  R.Pairs.fetch_add(Pairs);
  if (detachAndGather(St, Error, R.Finished)) {
    const uint64_t AllPairs = R.Pairs.load();
    // Before the deflation thread stops: what the monitors cost while alive.
    jitlock_rt_stats End{};
    jitlock_rt_get_stats(&End);
    jitlock_deflation_stats D{};
    jitlock_rt_get_deflation_stats(&D);
    const uint64_t Rss = residentBytes();
    const uint64_t NewMonitors =
        D.monitors_allocated - R.StartDeflation.monitors_allocated;
    uint64_t Increments = 0;
    for (uint64_t I = 0; I < Forks; ++I)
      Increments += R.Ring[I].Payload;
    if (Error.empty() && Increments != 2 * AllPairs)
      Error = "lost updates: the forks were incremented " +
              std::to_string(Increments) + " times, expected " +
              std::to_string(2 * AllPairs);
    jitlock_rt_stop_deflation();
    jitlock_rt_deflate_idle();
    jitlock_rt_stats After{};
    jitlock_rt_get_stats(&After);
    struct rusage Usage;
    getrusage(RUSAGE_SELF, &Usage);
    St.counters["pairs_per_s"] =
        benchmark::Counter(double(AllPairs), benchmark::Counter::kIsRate);
    St.counters["peak_rss_mib"] = double(Usage.ru_maxrss) / 1024.0;
    St.counters["bytes_per_monitor"] =
        NewMonitors && Rss > R.StartRssBytes
            ? double(Rss - R.StartRssBytes) / double(NewMonitors)
            : 0.0;
    St.counters["monitors_allocated"] = double(D.monitors_allocated);
    St.counters["inflations_per_pair"] =
        AllPairs ? double(End.inflations - R.StartStats.inflations) /
                       double(AllPairs)
                 : 0.0;
    St.counters["deflated_per_pair"] =
        AllPairs
            ? double(D.monitors_deflated - R.StartDeflation.monitors_deflated) /
                  double(AllPairs)
            : 0.0;
    // Short runs (Google Benchmark's first rounds) may end before the
    // deflation thread's first cycle: counted, not required.
    St.counters["deflation_cycles"] =
        double(D.thread_cycles - R.StartDeflation.thread_cycles);
    St.counters["monitors_alive"] = double(After.monitors_alive);
  }
  if (!Error.empty())
    St.SkipWithError(Error.c_str());
}

} // namespace

void registerPhilosophersBenchmarks() {
  forEachStorage([](auto Storage) {
    benchmark::RegisterBenchmark(
        (std::string("philosophers/") + storageName(Storage)).c_str(),
        [Storage](benchmark::State &St) { runPhilosophers(St, Storage); })
        ->Threads(Philosophers)
        ->UseRealTime()
        ->Setup(setup<Storage>)
        ->Teardown(teardown);
  });
}

} // namespace jitlock::bench
