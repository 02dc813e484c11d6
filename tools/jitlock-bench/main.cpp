//===- jitlock-bench/main.cpp - Locking schemes, measured side by side ----===//
//
// The benchmark every performance decision in jitlock is judged by: the
// monitor shapes (docs/benchmarks.md, "What is measured") through every path,
// each reported as the counter ns_per_pair with 100 lock+unlock pairs per
// benchmark iteration. docs/benchmarks.md has the method and the results.
//
// Paths (benchmark names are <shape>/<path>; the floor is just `floor`):
//   llvm     shapes.ll lowered by the jitlock passes and JIT-compiled here
//            (jitlock::JitSession, TLS mode, this process's layout)
//   asmjit   the same loops emitted with the asmjit emitters
//   runtime  C++ loops calling jitlock_rt_monitor_enter/exit, as an
//            interpreter would
//   heavy    shapes.ll lowered for heavy monitors, on the runtime configured
//            JITLOCK_LOCKING_HEAVY: every enter of an object without a
//            monitor inflates it (the scheme lightweight locking replaces)
//   pthread  a pthread_mutex_t per object (simple, contendedN, churn)
//   alloc    churn only: the allocator and the "GC" without any lock, so that
//            the locking cost of churn can be read off
//
// floor/lockstack is the floor plus a fast lock's lock-stack stores (no
// loads, no checks): what the lock stack itself costs next to the CAS.
//
// Monitor storage: inflated-index/<path> and inflated-table/<path> (llvm,
// asmjit, runtime) are `inflated` with the runtime configured for index or
// table storage and the kernels lowered and emitted for it;
// philosophers/<storage> (PhilosophersBench.cpp) is a contended workload
// over many objects with the deflation thread on; inflate-churn/<storage>
// (InflateChurnBench.cpp) has 4 threads inflating (heavy monitors) at once.
//
// Every path runs the same loop: a call per benchmark iteration that does 100
// pairs, each pair with one plain load+add+store of the object's payload
// inside the lock. All kernels share one call type, (thread, a, b, n).
//
// Besides ns_per_pair every single-threaded run reports inflations_per_pair
// (from the runtime's statistics) and monitors_alive after the final
// deflation; contendedN reports monitors_alive after every thread detached.
// contended2, contended4 and contended8 share one object among 2, 4 or 8
// threads and always run with repetitions (--jitlock-contended-repetitions,
// default 10): their spread is part of the result.
// Each run checks its payload counts and the runtime's return codes and fails
// (SkipWithError) when they are wrong.
//
// Safepoints (docs/benchmarks.md, "Safepoints"), from shapes.ll only:
//   poll/none, poll/llvm, poll/unrolled
//            a loop of payload increments without a poll, with one per
//            iteration, and without one as LLVM unrolls it; ns_per_iter
//   ttsp/N   N attached threads loop with a poll per iteration while this
//            (unattached) thread takes safepoints: median, p99 and max of
//            the time-to-safepoint and of stop+release, in µs
//   handshake/one/N, handshake/all/N
//            the same threads; one handshake per iteration with one of them
//            in turn, or with all of them: median, p99 and max latency
//
// Reservation (docs/benchmarks.md, "Reservation"; ReservationBench.cpp):
//   handoff/llvm, handoff/reserved
//            two threads taking turns over 256 reservable objects, each
//            revoked once under reserved locking; ns_per_pair, revocations
//   revoke/held, revoke/unheld
//            one revocation of an object its reserving thread holds or not:
//            median and p99 in ns
//
// Options: Google Benchmark's own (every --benchmark_* and --v=N goes to
// benchmark::Initialize), jitlock-bench's (llvm::cl, see --help), and LLVM's
// for the lowering of shapes.ll (-debug-pass-manager, -pass-remarks=jitlock,
// -time-passes, -stats: tools/common/ToolSupport.h).
//
// The source: Bench.h lists the files, one per family of kernels or runs.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"
#include "ToolSupport.h"

#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sys/single_threaded.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#ifndef JITLOCK_BUILD_TYPE
#define JITLOCK_BUILD_TYPE "unknown"
#endif

using namespace llvm;
using namespace jitlock::bench;
using jitlock::tools::error;

namespace jitlock::bench {
AsmjitKernels *Asmjit;
LlvmKernels *Llvm, *Heavy;
} // namespace jitlock::bench

namespace {

constexpr int ExitOk = 0, ExitFailed = 1, ExitUsage = 2;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

cl::OptionCategory BenchCategory("jitlock-bench options");

cl::opt<bool> PrintCode(
    "jitlock-print-code",
    cl::desc("Print the JIT-compiled llvm and heavy kernels as assembly and "
             "the asmjit kernels as listings, then exit (what "
             "docs/benchmarks.md discusses)"),
    cl::cat(BenchCategory));

jitlock::tools::NumberOpt SpinLimit(
    "jitlock-spin-limit",
    cl::desc("The runtime's spin_limit: how long a contended enter spins "
             "before it parks (default: the runtime's, 64)"),
    cl::value_desc("N"), cl::cat(BenchCategory));

jitlock::tools::NumberOpt ContendedReps(
    "jitlock-contended-repetitions",
    cl::desc("Repetitions of each contendedN benchmark, which always repeat "
             "(default 10)"),
    cl::value_desc("N"), cl::cat(BenchCategory));

cl::opt<std::string> PollLoop(
    "jitlock-poll-loop",
    cl::desc("Run poll/P's loop once for N iterations, then exit (instruction "
             "counts under callgrind, scripts/poll-instructions.py); P is "
             "none, llvm or unrolled"),
    cl::value_desc("P:N"), cl::cat(BenchCategory));

constexpr const char *MoreHelp = R"(
Google Benchmark's options go to it: every --benchmark_* option (e.g.
--benchmark_filter=<regex>, --benchmark_min_time=<seconds>,
--benchmark_repetitions=<n>, --benchmark_format=<console|json|csv>,
--benchmark_out=<file>, --benchmark_list_tests=true) and --v=<verbosity>.

EXIT STATUS:
  0  the benchmarks ran (a benchmark that failed its checks says so in its
     error_message and is skipped)
  1  this machine or runtime cannot run them as measured
  2  usage error
)";

/// Google Benchmark's own options, which its parser takes.
bool isBenchmarkOption(StringRef Arg) {
  Arg.consume_front("-");
  Arg.consume_front("-");
  return Arg.starts_with("benchmark_") || Arg.starts_with("v=");
}

/// --jitlock-poll-loop's path and iteration count.
struct PollLoopSpec {
  std::string Path;
  uint64_t Iterations = 0;
};

/// The options, checked; every problem is a usage error (status 2).
std::optional<PollLoopSpec> checkOptions() {
  if (SpinLimit.getNumOccurrences()) {
    if (SpinLimit < 0 || SpinLimit > UINT32_MAX)
      jitlock::tools::exitWithUsageError(
          "--jitlock-spin-limit needs a number from 0 to 4294967295",
          ExitUsage);
    BaseConfig.spin_limit = uint32_t(SpinLimit);
  }
  if (ContendedReps.getNumOccurrences()) {
    if (ContendedReps < 1 || ContendedReps > 1000)
      jitlock::tools::exitWithUsageError(
          "--jitlock-contended-repetitions needs a number from 1 to 1000",
          ExitUsage);
    ContendedRepetitions = uint32_t(ContendedReps);
  }
  if (!PollLoop.getNumOccurrences())
    return std::nullopt;
  auto [Path, Count] = StringRef(PollLoop).split(':');
  PollLoopSpec Spec{Path.str(), 0};
  if (pollKernel(Spec.Path) == NumKernels || Count.empty() ||
      Count.getAsInteger(10, Spec.Iterations))
    jitlock::tools::exitWithUsageError(
        "--jitlock-poll-loop needs <none|llvm|unrolled>:<n>, got '" + PollLoop +
            "'",
        ExitUsage);
  return Spec;
}

//===----------------------------------------------------------------------===//
// The machine context and --jitlock-print-code
//===----------------------------------------------------------------------===//

std::string cpuModel() {
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.rfind("model name", 0) == 0) {
      size_t Colon = Line.find(':');
      if (Colon != std::string::npos) {
        size_t B = Line.find_first_not_of(" \t", Colon + 1);
        return B == std::string::npos ? "" : Line.substr(B);
      }
    }
  return "unknown";
}

void addContext(const jitlock_rt_layout &L) {
  benchmark::AddCustomContext("jitlock_cpu_model", cpuModel());
  benchmark::AddCustomContext(
      "jitlock_cores", std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("jitlock_build_type", JITLOCK_BUILD_TYPE);
  benchmark::AddCustomContext("jitlock_compiler", __VERSION__);
  benchmark::AddCustomContext("jitlock_llvm", LLVM_VERSION_STRING);
  benchmark::AddCustomContext("jitlock_pairs_per_iteration",
                              std::to_string(PairsPerIteration));
  benchmark::AddCustomContext("jitlock_poll_iterations_per_call",
                              std::to_string(PollIterationsPerCall));
  benchmark::AddCustomContext("jitlock_churn_arena_objects",
                              std::to_string(ArenaObjects));
  benchmark::AddCustomContext("jitlock_tls_offset",
                              std::to_string(L.thread_tls_offset));
  benchmark::AddCustomContext("jitlock_lock_stack_capacity",
                              std::to_string(L.lock_stack_capacity));
  benchmark::AddCustomContext("jitlock_spin_limit",
                              std::to_string(BaseConfig.spin_limit));
  benchmark::AddCustomContext(
      "jitlock_paths",
      "llvm=shapes.ll lowered inline (TLS) and JIT-compiled at O2; "
      "asmjit=jitlock emitters, slow calls out of line; runtime=C ABI calls; "
      "heavy=shapes.ll lowered locking=heavy on a heavy runtime; "
      "pthread=pthread_mutex_t per object; floor=two bare cmpxchg");
}

int printCode() {
  auto Print = [](const char *Title, LlvmKernels *K) {
    llvm::outs() << "=== " << Title << " (JIT-compiled) ===\n";
    if (!K->Session) {
      llvm::outs() << "unavailable: " << K->Error << "\n";
      return;
    }
    if (llvm::Error E = K->Session->printAssembly(llvm::outs()))
      llvm::outs() << "cannot print: " << llvm::toString(std::move(E)) << "\n";
  };
  Print("llvm", Llvm);
  Print("heavy", Heavy);
  llvm::outs().flush();
  for (int K = 0; K < NumKernels; ++K)
    if (Asmjit->Fns[K])
      printf("=== asmjit %s ===\n%s\n", KernelSymbols[K],
             Asmjit->Listings[K].c_str());
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  // Google Benchmark's options to its parser (which names the tool in its
  // messages as it is named here), the rest to llvm::cl.
  char ToolName[] = "jitlock-bench";
  std::vector<char *> BenchmarkArgs = {ToolName};
  std::vector<const char *> ToolArgs = {Argv[0]};
  for (int I = 1; I < Argc; ++I) {
    if (isBenchmarkOption(Argv[I]))
      BenchmarkArgs.push_back(Argv[I]);
    else
      ToolArgs.push_back(Argv[I]);
  }
  jitlock::tools::parseCommandLine(
      int(ToolArgs.size()), ToolArgs.data(), "jitlock-bench",
      "The locking schemes measured side by side (docs/benchmarks.md)\n",
      MoreHelp, BenchCategory, ExitUsage);
  jitlock_rt_default_config(&BaseConfig);
  std::optional<PollLoopSpec> PollLoopRun = checkOptions();
  int BenchmarkArgc = int(BenchmarkArgs.size());
  BenchmarkArgs.push_back(nullptr);
  benchmark::Initialize(&BenchmarkArgc, BenchmarkArgs.data());
  if (benchmark::ReportUnrecognizedArguments(BenchmarkArgc,
                                             BenchmarkArgs.data()))
    return ExitUsage;

  if (int RC = jitlock_rt_configure(&BaseConfig)) {
    error() << "jitlock_rt_configure: " << jitlock_rt_status_name(RC) << "\n";
    return ExitUsage;
  }

  // A zeroed mutex must be a valid unlocked one: churn's allocator relies on
  // it for the pthread path.
  {
    pthread_mutex_t Init = PTHREAD_MUTEX_INITIALIZER, Zero;
    memset(&Zero, 0, sizeof(Zero));
    if (memcmp(&Init, &Zero, sizeof(Zero)) != 0) {
      error() << "PTHREAD_MUTEX_INITIALIZER is not all zero bytes here\n";
      return ExitFailed;
    }
  }

  // glibc skips the lock prefix of pthread_mutex_lock/unlock while the
  // process has never had a second thread; a managed runtime always has
  // several, and contendedN starts more anyway. Start one now, so that every
  // pthread run measures the atomic path.
  std::thread([] {}).join();
  if (__libc_single_threaded) {
    error() << "the process still counts as single-threaded\n";
    return ExitFailed;
  }

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.header_offset != 0) {
    error() << "the objects put the header at offset 0; the runtime is "
               "configured otherwise\n";
    return ExitFailed;
  }

  // LLVM's -debug-pass-manager for the lowering of shapes.ll.
  jitlock::JitOptions Lowering;
  Lowering.DebugPassManager = jitlock::tools::debugPassManager();
  Llvm = new LlvmKernels;
  Llvm->build(jitlock::LockingMode::Lightweight, "shapes.ll", L, Lowering);
  if (PollLoopRun) {
    // Nothing else is compiled: under callgrind, every instruction beyond
    // the loop is the same for every iteration count.
    KernelFn Fn = Llvm->Fns[pollKernel(PollLoopRun->Path)];
    if (!Fn) {
      error() << Llvm->Error << "\n";
      return ExitFailed;
    }
    return runPollLoop(Fn, PollLoopRun->Path.c_str(), PollLoopRun->Iterations);
  }
  Asmjit = new AsmjitKernels;
  Asmjit->build(L);
  Heavy = new LlvmKernels;
  Heavy->build(jitlock::LockingMode::Heavy, "shapes.ll (heavy)", L, Lowering);
  // The lightweight kernels again for index and table monitor storage,
  // lowered and emitted while the runtime is configured for each: the
  // lowering and the emitters follow its layout.
  LlvmFor[JITLOCK_MONITORS_POINTER] = Llvm;
  AsmjitFor[JITLOCK_MONITORS_POINTER] = Asmjit;
  for (uint32_t Storage : {JITLOCK_MONITORS_INDEX, JITLOCK_MONITORS_TABLE}) {
    jitlock_rt_config Cfg = BaseConfig;
    Cfg.monitor_storage = Storage;
    // The layout was handed out to the kernels before: a storage change
    // needs a shutdown (setRuntimeConfig does the same between runs).
    int RC = jitlock_rt_shutdown();
    if (RC == JITLOCK_OK)
      RC = jitlock_rt_configure(&Cfg);
    if (RC != JITLOCK_OK) {
      StorageError[Storage] = std::string("the runtime refuses ") +
                              storageName(Storage) +
                              " monitor storage: " + jitlock_rt_status_name(RC);
      continue;
    }
    jitlock_rt_layout SL;
    jitlock_rt_get_layout(&SL);
    const std::string Name =
        std::string("shapes.ll (") + storageName(Storage) + " storage)";
    LlvmFor[Storage] = new LlvmKernels;
    LlvmFor[Storage]->build(jitlock::LockingMode::Lightweight, Name.c_str(), SL,
                            Lowering);
    AsmjitFor[Storage] = new AsmjitKernels;
    AsmjitFor[Storage]->build(SL);
  }
  // The reserved kernels, lowered and emitted while the runtime is
  // configured for reservation: both follow its layout's field.
  {
    jitlock_rt_config Cfg = BaseConfig;
    Cfg.locking_mode = JITLOCK_LOCKING_RESERVED;
    Cfg.reserve_shift = BenchReserveShift;
    Cfg.reserve_bits = BenchReserveBits;
    int RC = jitlock_rt_shutdown();
    if (RC == JITLOCK_OK)
      RC = jitlock_rt_configure(&Cfg);
    if (RC != JITLOCK_OK) {
      ReservedError = std::string("the runtime refuses reserved locking: ") +
                      jitlock_rt_status_name(RC);
    } else {
      jitlock_rt_layout RL;
      jitlock_rt_get_layout(&RL);
      LlvmReserved = new LlvmKernels;
      LlvmReserved->build(jitlock::LockingMode::Reserved,
                          "shapes.ll (reserved)", RL, Lowering);
      AsmjitReserved = new AsmjitKernels;
      AsmjitReserved->build(RL);
    }
  }
  // Back to the base storage for the runs: another shutdown.
  int BaseRC = jitlock_rt_shutdown();
  if (BaseRC == JITLOCK_OK)
    BaseRC = jitlock_rt_configure(&BaseConfig);
  if (int RC = BaseRC) {
    error() << "jitlock_rt_configure: " << jitlock_rt_status_name(RC) << "\n";
    return ExitFailed;
  }
  // The benchmarks that need a missing kernel fail with this message too.
  for (const std::string *E : {&Asmjit->Error, &Llvm->Error, &Heavy->Error})
    if (!E->empty())
      error() << *E << "\n";
  for (const std::string *E :
       {&ReservedError, LlvmReserved ? &LlvmReserved->Error : nullptr,
        AsmjitReserved ? &AsmjitReserved->Error : nullptr})
    if (E && !E->empty())
      error() << *E << "\n";
  for (uint32_t Storage : {JITLOCK_MONITORS_INDEX, JITLOCK_MONITORS_TABLE})
    for (const std::string *E :
         {&StorageError[Storage],
          LlvmFor[Storage] ? &LlvmFor[Storage]->Error : nullptr,
          AsmjitFor[Storage] ? &AsmjitFor[Storage]->Error : nullptr})
      if (E && !E->empty())
        error() << *E << "\n";
  jitlock::tools::printStatistics();

  if (PrintCode)
    return printCode();

  addContext(L);
  registerMonitorBenchmarks();
  registerPhilosophersBenchmarks();
  registerInflateChurnBenchmarks();
  registerReservationBenchmarks();
  registerSafepointBenchmarks();
  registerDeflationBenchmarks(setupLightweight);
  registerDeoptBenchmarks(setupLightweight);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return ExitOk;
}
