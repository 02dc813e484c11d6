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
//   pthread  a pthread_mutex_t per object (simple, contended2, churn)
//   alloc    churn only: the allocator and the "GC" without any lock, so that
//            the locking cost of churn can be read off
//
// floor/lockstack is the floor plus a fast lock's lock-stack stores (no
// loads, no checks): what the lock stack itself costs next to the CAS.
//
// Every path runs the same loop: a call per benchmark iteration that does 100
// pairs, each pair with one plain load+add+store of the object's payload
// inside the lock. All kernels share one call type, (thread, a, b, n).
//
// Besides ns_per_pair every single-threaded run reports inflations_per_pair
// (from the runtime's statistics) and monitors_alive after the final
// deflation; contended2 reports monitors_alive after both threads detached.
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
// Extra options, besides Google Benchmark's:
//   --jitlock-print-code     print the JIT-compiled llvm and heavy kernels
//                            as assembly and the asmjit kernels as listings,
//                            then exit (what docs/benchmarks.md discusses)
//   --jitlock-spin-limit=N   the runtime's spin_limit (default 64): how long
//                            a contended enter spins before it parks
//   --jitlock-poll-loop=P:N  run poll/P's loop once for N iterations, then
//                            exit (instruction counts under callgrind,
//                            scripts/poll-instructions.py)
//
// The source: Bench.h lists the files, one per family of kernels or runs.
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sys/single_threaded.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#ifndef JITLOCK_BUILD_TYPE
#define JITLOCK_BUILD_TYPE "unknown"
#endif

using namespace jitlock::bench;

namespace jitlock::bench {
AsmjitKernels *Asmjit;
LlvmKernels *Llvm, *Heavy;
} // namespace jitlock::bench

namespace {

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

int main(int argc, char **argv) {
  bool PrintCode = false;
  std::string PollLoopPath;
  uint64_t PollLoopIterations = 0;
  jitlock_rt_default_config(&BaseConfig);
  std::vector<char *> Args;
  for (int I = 0; I < argc; ++I) {
    const char *SpinFlag = "--jitlock-spin-limit=";
    const char *PollLoopFlag = "--jitlock-poll-loop=";
    if (I > 0 && strcmp(argv[I], "--jitlock-print-code") == 0) {
      PrintCode = true;
    } else if (I > 0 &&
               strncmp(argv[I], PollLoopFlag, strlen(PollLoopFlag)) == 0) {
      const char *Spec = argv[I] + strlen(PollLoopFlag);
      const char *Colon = strchr(Spec, ':');
      char *End = nullptr;
      if (Colon) {
        PollLoopPath.assign(Spec, Colon);
        PollLoopIterations = strtoull(Colon + 1, &End, 10);
      }
      if (!Colon || !End || *End || End == Colon + 1 ||
          pollKernel(PollLoopPath) == NumKernels) {
        fprintf(stderr,
                "jitlock-bench: bad %s (want <none|llvm|unrolled>:<n>)\n",
                argv[I]);
        return 2;
      }
    } else if (I > 0 && strncmp(argv[I], SpinFlag, strlen(SpinFlag)) == 0) {
      char *End = nullptr;
      unsigned long V = strtoul(argv[I] + strlen(SpinFlag), &End, 10);
      if (!End || *End || V > UINT32_MAX) {
        fprintf(stderr, "jitlock-bench: bad %s\n", argv[I]);
        return 2;
      }
      BaseConfig.spin_limit = uint32_t(V);
    } else {
      Args.push_back(argv[I]);
    }
  }
  if (int RC = jitlock_rt_configure(&BaseConfig)) {
    fprintf(stderr, "jitlock-bench: jitlock_rt_configure: %s\n",
            jitlock_rt_status_name(RC));
    return 2;
  }
  int Argc = int(Args.size());
  Args.push_back(nullptr);
  benchmark::Initialize(&Argc, Args.data());
  if (benchmark::ReportUnrecognizedArguments(Argc, Args.data()))
    return 2;

  // A zeroed mutex must be a valid unlocked one: churn's allocator relies on
  // it for the pthread path.
  {
    pthread_mutex_t Init = PTHREAD_MUTEX_INITIALIZER, Zero;
    memset(&Zero, 0, sizeof(Zero));
    if (memcmp(&Init, &Zero, sizeof(Zero)) != 0) {
      fprintf(stderr, "jitlock-bench: PTHREAD_MUTEX_INITIALIZER is not all "
                      "zero bytes here\n");
      return 1;
    }
  }

  // glibc skips the lock prefix of pthread_mutex_lock/unlock while the
  // process has never had a second thread; a managed runtime always has
  // several, and contended2 starts one anyway. Start one now, so that every
  // pthread run measures the atomic path.
  std::thread([] {}).join();
  if (__libc_single_threaded) {
    fprintf(stderr, "jitlock-bench: the process still counts as "
                    "single-threaded\n");
    return 1;
  }

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (L.header_offset != 0) {
    fprintf(stderr, "jitlock-bench: the objects put the header at offset 0; "
                    "the runtime is configured otherwise\n");
    return 1;
  }

  Llvm = new LlvmKernels;
  Llvm->build(jitlock::LockingMode::Lightweight, "shapes.ll", L, {});
  if (!PollLoopPath.empty()) {
    // Nothing else is compiled: under callgrind, every instruction beyond
    // the loop is the same for every iteration count.
    KernelFn Fn = Llvm->Fns[pollKernel(PollLoopPath)];
    if (!Fn) {
      fprintf(stderr, "jitlock-bench: %s\n", Llvm->Error.c_str());
      return 1;
    }
    return runPollLoop(Fn, PollLoopPath.c_str(), PollLoopIterations);
  }
  Asmjit = new AsmjitKernels;
  Asmjit->build(L);
  Heavy = new LlvmKernels;
  Heavy->build(jitlock::LockingMode::Heavy, "shapes.ll (heavy)", L, {});
  for (const std::string *E : {&Asmjit->Error, &Llvm->Error, &Heavy->Error})
    if (!E->empty())
      fprintf(stderr, "jitlock-bench: %s\n", E->c_str());

  if (PrintCode)
    return printCode();

  addContext(L);
  registerMonitorBenchmarks();
  registerSafepointBenchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
