//===- SafepointBenchmarks.cpp - Polls, time-to-safepoint, handshakes -----===//
//
// docs/benchmarks.md, "Safepoints", from shapes.ll's llvm kernels only:
//   poll/none, poll/llvm, poll/unrolled   ns_per_iter of a loop without a
//                                         poll, with one, unrolled by LLVM
//   ttsp/N                                time-to-safepoint with N looping
//                                         threads
//   handshake/one/N, handshake/all/N      handshake latency
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "ToolSupport.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

namespace jitlock::bench {

namespace {

/// The looping threads of ttsp/N and handshake/*/N.
constexpr unsigned LooperCounts[] = {1, 2, 4, 8};

/// Waits politely: a spin-wait hint, or a yield once the wait is long.
inline void backOff(unsigned Round) {
  if (Round < 1000) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else {
    std::this_thread::yield();
  }
}

/// poll/<path>: PollIterationsPerCall increments of a payload per benchmark
/// iteration, reported as ns_per_iter (CPU time per loop iteration). Nothing
/// arms the poll word meanwhile, so a poll never takes its slow path.
void runPoll(benchmark::State &St, KernelFn Fn, const std::string &Why) {
  if (!SetupError.empty())
    return St.SkipWithError(SetupError.c_str());
  if (!Fn)
    return St.SkipWithError(Why.c_str());
  jitlock_thread *T = jitlock_rt_attach();
  if (!T)
    return St.SkipWithError("jitlock_rt_attach failed");
  Object *A = &Objs[0];
  resetObject(*A);
  for (auto _ : St)
    callKernel(Fn, T, A, nullptr, PollIterationsPerCall);
  const uint64_t Iterations = uint64_t(St.iterations()) * PollIterationsPerCall;
  std::string Error;
  if (A->Payload != Iterations)
    Error = "the payload is " + std::to_string(A->Payload) + ", expected " +
            std::to_string(Iterations);
  if (jitlock_rt_detach() != JITLOCK_OK && Error.empty())
    Error = "jitlock_rt_detach failed";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  St.counters["ns_per_iter"] = benchmark::Counter(
      double(Iterations) * 1e-9,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

} // namespace

int runPollLoop(KernelFn Fn, const char *Path, uint64_t N) {
  jitlock_thread *T = jitlock_rt_attach();
  if (!T) {
    tools::error() << "jitlock_rt_attach failed\n";
    return 1;
  }
  Object *A = &Objs[0];
  resetObject(*A);
  callKernel(Fn, T, A, nullptr, N);
  if (A->Payload != N || jitlock_rt_detach() != JITLOCK_OK) {
    tools::error() << "poll/" << Path << ": payload " << A->Payload
                   << ", expected " << N << "\n";
    return 1;
  }
  printf("poll/%s: %" PRIu64 " iterations\n", Path, N);
  return 0;
}

namespace {

/// One thread of ttsp/N and handshake/*/N, on a cache line of its own:
/// attached, in bench_spin (a poll per iteration) until told to stop, and
/// publishing its iteration count in Count.
struct alignas(64) Looper {
  std::atomic<uint64_t> Count{0};
  jitlock_thread *Thread = nullptr; ///< set before Count first moves
  std::thread OS;
};

/// N looping threads. No attached thread ever waits outside bench_spin:
/// each attaches, starts looping at once, and detaches as soon as the loop
/// ends; the synchronizer, which does wait for them, is not attached. So
/// none has to be native at any time.
class LoopingThreads {
public:
  explicit LoopingThreads(KernelFn Spin) : Spin(Spin) {}
  ~LoopingThreads() { stop(); }

  /// Starts N threads and waits until each is looping. False on failure,
  /// with the threads stopped again.
  bool start(unsigned N, std::string &Error) {
    Loopers = std::vector<Looper>(N);
    for (Looper &L : Loopers)
      L.OS = std::thread([this, &L] { loop(L); });
    for (Looper &L : Loopers)
      for (unsigned Round = 0; L.Count.load(std::memory_order_acquire) == 0;
           ++Round) {
        if (Failed.load()) {
          stop();
          Error = "a looping thread could not attach";
          return false;
        }
        backOff(Round);
      }
    return true;
  }

  /// Stops every thread and joins it. Returns false when one could not
  /// detach.
  bool stop() {
    Stop.store(1, std::memory_order_relaxed);
    for (Looper &L : Loopers)
      if (L.OS.joinable())
        L.OS.join();
    Loopers.clear();
    Stop.store(0, std::memory_order_relaxed);
    return !Failed.exchange(false);
  }

  unsigned size() const { return unsigned(Loopers.size()); }
  jitlock_thread *thread(unsigned I) const { return Loopers[I].Thread; }
  uint64_t count(unsigned I) const {
    return Loopers[I].Count.load(std::memory_order_relaxed);
  }

  /// Waits until every count differs from Stopped (every thread is running
  /// again); false after 10 s without.
  bool waitUntilMoved(const std::vector<uint64_t> &Stopped) const {
    const auto Deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (unsigned I = 0; I < size(); ++I)
      for (unsigned Round = 0; count(I) == Stopped[I]; ++Round) {
        if (Round % 1024 == 1023 && std::chrono::steady_clock::now() > Deadline)
          return false;
        backOff(Round);
      }
    return true;
  }

private:
  void loop(Looper &L) {
    jitlock_thread *T = jitlock_rt_attach();
    if (!T) {
      Failed.store(true);
      return;
    }
    // Published by bench_spin's first store to Count (the synchronizer
    // reads Thread after it saw Count move, with acquire).
    L.Thread = T;
    std::atomic_thread_fence(std::memory_order_release);
    // bench_spin's two pointers are the count and the stop flag, not
    // objects; the kernel type is shared.
    callKernel(Spin, T, reinterpret_cast<Object *>(&L.Count),
               reinterpret_cast<Object *>(&Stop), 0);
    if (jitlock_rt_detach() != JITLOCK_OK)
      Failed.store(true);
  }

  KernelFn Spin;
  std::vector<Looper> Loopers;
  alignas(64) std::atomic<uint64_t> Stop{0};
  std::atomic<bool> Failed{false};
};

/// Median, p99 and max of latency samples, in µs, as counters named
/// <Prefix>_median_us and so on. The p99 is the nearest-rank one.
void reportLatencies(benchmark::State &St, const char *Prefix,
                     std::vector<double> &SamplesUs) {
  if (SamplesUs.empty())
    return;
  std::sort(SamplesUs.begin(), SamplesUs.end());
  auto Rank = [&](double Q) {
    size_t K = size_t(std::ceil(Q * double(SamplesUs.size())));
    return SamplesUs[std::min(SamplesUs.size(), std::max<size_t>(K, 1)) - 1];
  };
  const std::string P = Prefix;
  St.counters[P + "_median_us"] = Rank(0.5);
  St.counters[P + "_p99_us"] = Rank(0.99);
  St.counters[P + "_max_us"] = SamplesUs.back();
}

/// Starts the N looping threads of a ttsp or handshake run, after checking
/// that the synchronizer, the benchmark's own thread, is not attached
/// (safepoint_begin would wait for itself). False (the run skipped with the
/// error) when it cannot.
bool startLooping(benchmark::State &St, LoopingThreads &Threads, unsigned N,
                  KernelFn Spin, const std::string &Why) {
  std::string Error = SetupError;
  if (Error.empty() && !Spin)
    Error = Why;
  if (Error.empty() && jitlock_rt_current())
    Error = "the synchronizing thread is attached";
  if (Error.empty())
    Threads.start(N, Error);
  if (Error.empty())
    return true;
  St.SkipWithError(Error.c_str());
  return false;
}

double microseconds(std::chrono::steady_clock::duration D) {
  return std::chrono::duration<double, std::micro>(D).count();
}

using Clock = std::chrono::steady_clock;

/// When one safepoint of ttsp/N began, had stopped every thread, and saw
/// every thread running again.
struct SafepointTimes {
  Clock::time_point Begin, AllStopped, Running;
};

/// One safepoint over the looping threads: begin, the operation, end, then
/// wait until every thread runs again. The operation reads every count, and
/// again after `Hold`: a thread that was not really stopped moves its count
/// in between (an iteration takes a few ns, but a count's cache line takes
/// up to a few hundred ns to come back, so only a Hold of microseconds makes
/// the check sure).
bool takeSafepoint(const LoopingThreads &Threads, Clock::duration Hold,
                   std::vector<uint64_t> &Stopped, SafepointTimes &Times,
                   std::string &Error) {
  Times.Begin = Clock::now();
  const int RC = jitlock_rt_safepoint_begin();
  Times.AllStopped = Clock::now();
  if (RC != JITLOCK_OK) {
    Error = std::string("jitlock_rt_safepoint_begin: ") +
            jitlock_rt_status_name(RC);
    return false;
  }
  const unsigned N = Threads.size();
  for (unsigned I = 0; I < N; ++I)
    Stopped[I] = Threads.count(I);
  if (Hold != Clock::duration::zero())
    for (unsigned Round = 0; Clock::now() - Times.AllStopped < Hold; ++Round)
      backOff(Round);
  bool Moved = false;
  for (unsigned I = 0; I < N; ++I)
    Moved |= Threads.count(I) != Stopped[I];
  if (int EndRC = jitlock_rt_safepoint_end()) {
    Error = std::string("jitlock_rt_safepoint_end: ") +
            jitlock_rt_status_name(EndRC);
    return false;
  }
  if (Moved) {
    Error = "a looping thread ran during the safepoint";
    return false;
  }
  if (!Threads.waitUntilMoved(Stopped)) {
    Error = "a looping thread did not resume after the safepoint";
    return false;
  }
  Times.Running = Clock::now();
  return true;
}

/// ttsp/N: N threads loop with a poll per iteration; this (unattached)
/// thread takes a safepoint per benchmark iteration. TTSP is the time
/// jitlock_rt_safepoint_begin takes; stop+release runs from its call until
/// every thread is seen running again after jitlock_rt_safepoint_end (its
/// count moved). The manual time of an iteration is its stop+release.
///
/// The timed safepoints hold the world only while the counts are read. So
/// that the run still proves every thread stopped, every 32nd iteration
/// first takes an untimed safepoint that holds it for 20 µs.
void runTtsp(benchmark::State &St, unsigned N, KernelFn Spin,
             const std::string &Why) {
  LoopingThreads Threads(Spin);
  if (!startLooping(St, Threads, N, Spin, Why))
    return;
  std::string Error;
  std::vector<double> Ttsp, StopRelease;
  std::vector<uint64_t> Stopped(N);
  SafepointTimes Times;
  for (auto _ : St) {
    if (Ttsp.size() % 32 == 0 &&
        !takeSafepoint(Threads, std::chrono::microseconds(20), Stopped, Times,
                       Error))
      break;
    if (!takeSafepoint(Threads, Clock::duration::zero(), Stopped, Times, Error))
      break;
    St.SetIterationTime(
        std::chrono::duration<double>(Times.Running - Times.Begin).count());
    Ttsp.push_back(microseconds(Times.AllStopped - Times.Begin));
    StopRelease.push_back(microseconds(Times.Running - Times.Begin));
  }
  if (!Threads.stop() && Error.empty())
    Error = "a looping thread could not detach";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  reportLatencies(St, "ttsp", Ttsp);
  reportLatencies(St, "stop_release", StopRelease);
}

/// What a handshake operation of handshake/*/N does: count, and check that
/// it ran for the thread it was meant for.
struct HandshakeTally {
  std::atomic<uint64_t> Runs{0};
  std::atomic<uint64_t> WrongTarget{0};
  jitlock_thread *Expected = nullptr; ///< null: any looping thread
};

void countHandshake(void *Arg, jitlock_thread *Target) {
  auto *H = static_cast<HandshakeTally *>(Arg);
  H->Runs.fetch_add(1, std::memory_order_relaxed);
  if (H->Expected && Target != H->Expected)
    H->WrongTarget.fetch_add(1, std::memory_order_relaxed);
}

/// handshake/one/N and handshake/all/N: the looping threads of ttsp/N; this
/// (unattached) thread runs one handshake per benchmark iteration, with the
/// looping threads in turn (one) or with all of them (all), and times the
/// call until it returns (every operation has run).
void runHandshake(benchmark::State &St, unsigned N, bool All, KernelFn Spin,
                  const std::string &Why) {
  LoopingThreads Threads(Spin);
  if (!startLooping(St, Threads, N, Spin, Why))
    return;
  std::string Error;
  std::vector<double> Latency;
  HandshakeTally Tally;
  unsigned Next = 0;
  for (auto _ : St) {
    int RC;
    const auto Begin = Clock::now();
    if (All) {
      RC = jitlock_rt_handshake_all(countHandshake, &Tally);
    } else {
      Tally.Expected = Threads.thread(Next);
      RC = jitlock_rt_handshake(Tally.Expected, countHandshake, &Tally);
      Next = (Next + 1) % N;
    }
    const auto End = Clock::now();
    if (RC != JITLOCK_OK) {
      Error = std::string(All ? "jitlock_rt_handshake_all: "
                              : "jitlock_rt_handshake: ") +
              jitlock_rt_status_name(RC);
      break;
    }
    St.SetIterationTime(std::chrono::duration<double>(End - Begin).count());
    Latency.push_back(microseconds(End - Begin));
  }
  if (!Threads.stop() && Error.empty())
    Error = "a looping thread could not detach";
  // Exactly one run per target and call: each looping thread is a target of
  // handshake_all (this thread is not attached).
  const uint64_t Expected = uint64_t(Latency.size()) * (All ? N : 1);
  if (Error.empty() && Tally.Runs.load() != Expected)
    Error = "the handshake operation ran " + std::to_string(Tally.Runs) +
            " times, expected " + std::to_string(Expected);
  if (Error.empty() && Tally.WrongTarget.load())
    Error = "a handshake operation ran for the wrong thread";
  if (!Error.empty())
    return St.SkipWithError(Error.c_str());
  reportLatencies(St, "handshake", Latency);
}

} // namespace

/// The poll kernel that --jitlock-poll-loop=<path>:<n> names.
Kernel pollKernel(const std::string &Path) {
  return Path == "none"       ? KPollNone
         : Path == "llvm"     ? KPollLlvm
         : Path == "unrolled" ? KPollUnrolled
                              : NumKernels;
}

void registerSafepointBenchmarks() {
  // Safepoints (docs/benchmarks.md, "Safepoints"): the llvm kernels only.
  for (auto [K, Name] :
       {std::pair{KPollNone, "poll/none"}, std::pair{KPollLlvm, "poll/llvm"},
        std::pair{KPollUnrolled, "poll/unrolled"}}) {
    std::string Why;
    KernelFn Fn = kernelOf(*Llvm, K, Why);
    benchmark::RegisterBenchmark(Name, [Fn, Why](benchmark::State &St) {
      runPoll(St, Fn, Why);
    })->Setup(setupLightweight);
  }
  std::string Why;
  KernelFn Spin = kernelOf(*Llvm, KSpin, Why);
  auto AddThreaded = [&](const std::string &Name, auto Run) {
    benchmark::RegisterBenchmark(Name.c_str(), Run)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Setup(setupLightweight);
  };
  for (unsigned N : LooperCounts) {
    const std::string Threads = std::to_string(N);
    AddThreaded("ttsp/" + Threads,
                [=](benchmark::State &St) { runTtsp(St, N, Spin, Why); });
    AddThreaded("handshake/one/" + Threads, [=](benchmark::State &St) {
      runHandshake(St, N, /*All=*/false, Spin, Why);
    });
    AddThreaded("handshake/all/" + Threads, [=](benchmark::State &St) {
      runHandshake(St, N, /*All=*/true, Spin, Why);
    });
  }
}

} // namespace jitlock::bench
