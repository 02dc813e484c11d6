//===- jitlock-bench/DeflationBench.cpp - Concurrent deflation ------------===//
//
// What concurrent deflation (docs/monitors.md, "Concurrent deflation") costs:
//
//   deflation/<monitors>/<mutators>
//            per benchmark iteration this (attached, then native) thread
//            inflates <monitors> objects and leaves them idle (a zero timed
//            wait each), then times one jitlock_rt_deflate_idle: the sweep,
//            the handshake with every thread, the free list. Meanwhile
//            <mutators> attached threads lock and unlock private objects
//            through the runtime with a poll per iteration, as compiled code
//            would, and time each poll that finds the poll word armed: the
//            pause the deflation's handshake adds to that mutator.
//
// Counters: monitors_per_s (monitors deflated per second of deflate_idle),
// cycle_median_us and cycle_p99_us (one deflate_idle), pause_median_us,
// pause_p99_us and pause_max_us (over every mutator's pauses; absent with no
// mutator), pauses (per deflation, per mutator: 1 when each handshake reached
// each mutator at a poll) and monitors_alive after the run (0).
//
// main.cpp registers these with registerDeflationBenchmarks(Setup), Setup
// being the callback that puts the runtime in lightweight mode.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "jitlock/jitlock_rt.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/// An object as the runtime sees it: the header at offset 0, alone on its
/// cache line.
struct alignas(64) BenchObject {
  std::atomic<uint64_t> Header{1};
};

/// One mutator: attached, locking its own object in a loop with a poll per
/// iteration; the pauses it measured at armed polls, in µs.
struct alignas(64) Mutator {
  BenchObject Own;
  std::vector<double> PausesUs;
  std::atomic<uint64_t> Iterations{0};
  std::atomic<bool> Failed{false};
  std::thread OS;
};

class Mutators {
public:
  Mutators(unsigned N, const jitlock_rt_layout &L) : L(L), All(N) {
    for (Mutator &M : All) {
      M.PausesUs.reserve(1 << 16);
      M.OS = std::thread([this, &M] { loop(M); });
    }
    // Running, each of them, before the first deflation.
    for (Mutator &M : All)
      while (M.Iterations.load(std::memory_order_acquire) == 0 &&
             !M.Failed.load())
        std::this_thread::yield();
  }
  ~Mutators() { pauses(); }

  bool failed() const {
    return std::any_of(All.begin(), All.end(),
                       [](const Mutator &M) { return M.Failed.load(); });
  }
  /// Every pause so far; call once they have stopped.
  std::vector<double> pauses() {
    Stop.store(true);
    std::vector<double> P;
    for (Mutator &M : All) {
      if (M.OS.joinable())
        M.OS.join();
      P.insert(P.end(), M.PausesUs.begin(), M.PausesUs.end());
    }
    return P;
  }

private:
  void loop(Mutator &M) {
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      M.Failed.store(true);
      return;
    }
    auto *Poll = reinterpret_cast<std::atomic<uint64_t> *>(
        reinterpret_cast<char *>(T) + L.poll_word_offset);
    while (!Stop.load(std::memory_order_relaxed)) {
      if (jitlock_rt_monitor_enter(T, &M.Own) != JITLOCK_OK ||
          jitlock_rt_monitor_exit(T, &M.Own) != JITLOCK_OK)
        M.Failed.store(true);
      if (Poll->load(std::memory_order_relaxed) & L.poll_armed_bit) {
        Clock::time_point Start = Clock::now();
        jitlock_rt_safepoint_poll(T);
        M.PausesUs.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - Start)
                .count());
      }
      M.Iterations.fetch_add(1, std::memory_order_release);
    }
    if (jitlock_rt_detach() != JITLOCK_OK)
      M.Failed.store(true);
  }

  const jitlock_rt_layout &L;
  std::deque<Mutator> All;
  std::atomic<bool> Stop{false};
};

/// The nearest-rank percentile of sorted samples.
double percentile(const std::vector<double> &Sorted, double Q) {
  size_t K = size_t(std::ceil(Q * double(Sorted.size())));
  return Sorted[std::min(Sorted.size(), std::max<size_t>(K, 1)) - 1];
}

void runDeflation(benchmark::State &St, unsigned NumMonitors,
                  unsigned NumMutators) {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.locking_mode != JITLOCK_LOCKING_LIGHTWEIGHT)
    return St.SkipWithError("the runtime is not in lightweight mode");
  if (jitlock_rt_current())
    return St.SkipWithError("the benchmark thread is attached already");
  jitlock_thread *Self = jitlock_rt_attach();
  if (!Self)
    return St.SkipWithError("jitlock_rt_attach failed");
  std::vector<BenchObject> Objects(NumMonitors);
  std::vector<double> CycleUs;
  uint64_t Deflated = 0;
  double DeflatingSeconds = 0;
  std::string Error;
  std::unique_ptr<Mutators> Running;
  if (NumMutators)
    Running = std::make_unique<Mutators>(NumMutators, L);
  for (auto _ : St) {
    for (BenchObject &O : Objects)
      if (jitlock_rt_monitor_enter(Self, &O) != JITLOCK_OK ||
          jitlock_rt_wait_timed(Self, &O, 0) != JITLOCK_ETIMEDOUT ||
          jitlock_rt_monitor_exit(Self, &O) != JITLOCK_OK)
        Error = "could not inflate an object";
    // Native while deflating: the handshake does not wait for this thread.
    jitlock_rt_enter_native(Self);
    Clock::time_point Start = Clock::now();
    size_t N = jitlock_rt_deflate_idle();
    double Seconds =
        std::chrono::duration<double>(Clock::now() - Start).count();
    jitlock_rt_leave_native(Self);
    St.SetIterationTime(Seconds);
    if (N != NumMonitors && Error.empty())
      Error = "deflated " + std::to_string(N) + " monitors of " +
              std::to_string(NumMonitors);
    Deflated += N;
    DeflatingSeconds += Seconds;
    CycleUs.push_back(Seconds * 1e6);
  }
  std::vector<double> Pauses;
  if (Running) {
    Pauses = Running->pauses();
    if (Running->failed() && Error.empty())
      Error = "a mutator failed to lock, attach or detach";
    Running.reset();
  }
  if (jitlock_rt_detach() != JITLOCK_OK && Error.empty())
    Error = "jitlock_rt_detach failed";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  std::sort(CycleUs.begin(), CycleUs.end());
  St.counters["monitors_per_s"] = double(Deflated) / DeflatingSeconds;
  St.counters["cycle_median_us"] = percentile(CycleUs, 0.5);
  St.counters["cycle_p99_us"] = percentile(CycleUs, 0.99);
  if (!Pauses.empty()) {
    std::sort(Pauses.begin(), Pauses.end());
    St.counters["pause_median_us"] = percentile(Pauses, 0.5);
    St.counters["pause_p99_us"] = percentile(Pauses, 0.99);
    St.counters["pause_max_us"] = Pauses.back();
    St.counters["pauses"] =
        double(Pauses.size()) / double(St.iterations() * NumMutators);
  }
  jitlock_rt_stats S;
  jitlock_rt_get_stats(&S);
  St.counters["monitors_alive"] = double(S.monitors_alive);
}

} // namespace

void jitlock::bench::registerDeflationBenchmarks(
    void (*Setup)(const benchmark::State &)) {
  struct Shape {
    unsigned Monitors, Mutators;
  };
  for (Shape S :
       {Shape{1024, 0}, Shape{1024, 1}, Shape{1024, 2}, Shape{1024, 4},
        Shape{16384, 0}, Shape{16384, 2}, Shape{64, 2}}) {
    std::string Name = "deflation/" + std::to_string(S.Monitors) + "/" +
                       std::to_string(S.Mutators);
    auto *B =
        benchmark::RegisterBenchmark(Name.c_str(), [S](benchmark::State &St) {
          runDeflation(St, S.Monitors, S.Mutators);
        });
    B->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (Setup)
      B->Setup(Setup);
  }
}
