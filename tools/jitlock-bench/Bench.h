//===- Bench.h - What jitlock-bench's files share ---------------*- C++ -*-===//
//
// The objects every path locks, the kernels' common call type and the kernel
// sets JIT-compiled or emitted at start-up; main.cpp describes the benchmark.
//
//   RuntimeKernels.cpp      C++ loops over the runtime's C ABI, pthread
//                           mutexes, and allocation alone
//   AsmjitKernels.cpp       the loops emitted with the asmjit emitters
//   LlvmKernels.cpp         shapes.ll lowered by the passes and JIT-compiled
//   MonitorBenchmarks.cpp   the monitor shapes through every path
//   SafepointBenchmarks.cpp polls, time-to-safepoint and handshakes
//   PhilosophersBench.cpp   many objects, neighbours contending, the
//                           deflation thread on, under each monitor storage
//   InflateChurnBench.cpp   threads inflating at once, under each monitor
//                           storage
//   ReservationBench.cpp    reserved objects handed off between threads,
//                           and what one revocation costs
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_BENCH_BENCH_H
#define JITLOCK_BENCH_BENCH_H

#include "jitlock/JIT.h"
#include "jitlock/jitlock_rt.h"

#include <asmjit/x86.h>
#include <benchmark/benchmark.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>

namespace jitlock::bench {

constexpr uint64_t PairsPerIteration = 100;
/// The churn arena: 40 iterations' worth of objects (256000 bytes, within
/// L2), then the "GC" deflates idle monitors and the bump pointer restarts.
constexpr uint64_t ArenaIterations = 40;
constexpr uint64_t ArenaObjects = ArenaIterations * PairsPerIteration;
/// Loop iterations per call of a poll kernel. More than the 100 pairs of the
/// locking shapes: an iteration costs a few cycles, and the harness loop
/// around each call should not matter.
constexpr uint64_t PollIterationsPerCall = 1000;

/// An object as the benchmark lays it out: the header where the runtime's
/// default layout expects it, one payload field, and room for the pthread
/// path's mutex, so that every path allocates and touches the same 64 bytes.
struct alignas(64) Object {
  uint64_t Header;
  uint64_t Payload;
  pthread_mutex_t Mutex;
};
static_assert(sizeof(Object) == 64, "shapes.ll's %Object is 64 bytes");
static_assert(offsetof(Object, Payload) == 8, "shapes.ll's payload is at 8");

inline void resetObject(Object &O) {
  memset(&O, 0, sizeof(O));
  O.Header = 1;
}

/// Every kernel does N pairs. The llvm kernels ignore Thread (lowered code
/// finds its thread through the thread pointer); the asmjit kernels keep it
/// in a register as a baseline JIT does; the runtime kernels pass it on.
using KernelFn = void (*)(jitlock_thread *Thread, Object *A, Object *B,
                          uint64_t N);

enum Kernel {
  KSimple,
  KRecursive,
  KSerial,
  KChurn,
  KFloor,
  KFloorLockStack,
  KFloorCasStore,
  // The safepoint kernels (llvm only).
  KPollNone,
  KPollLlvm,
  KPollUnrolled,
  KSpin,
  // elided/llvm and elided/llvm-noelide (llvm only).
  KElided,
  KElidedNoElide,
  // philosophers/<storage> (llvm only).
  KPhilosophers,
  NumKernels
};
inline constexpr const char *KernelSymbols[NumKernels] = {
    "bench_simple",          "bench_recursive",   "bench_serial",
    "bench_churn",           "bench_floor",       "bench_floor_lockstack",
    "bench_floor_cas_store", "bench_poll_none",   "bench_poll_llvm",
    "bench_poll_unrolled",   "bench_spin",        "bench_elided",
    "bench_elided_noelide",  "bench_philosophers"};

/// Calls JIT-compiled code. UBSan's -fsanitize=function (in the asan preset)
/// checks a signature word just before the callee, which JIT code does not
/// have, so the call opts out.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
inline void
callKernel(KernelFn Fn, jitlock_thread *T, Object *A, Object *B, uint64_t N) {
  Fn(T, A, B, N);
}

/// Set by the C++ kernels when a runtime or pthread call fails; each run
/// checks it after its loop (an OR per call keeps the loop honest).
extern std::atomic<bool> KernelFailed;

/// The runtime path's kernel K (simple, recursive, serial or churn; null for
/// the others), the pthread path's (churn, or simple for any other) and
/// churn/alloc's.
KernelFn runtimeKernel(Kernel K);
KernelFn pthreadKernel(Kernel K);
KernelFn allocKernel();

/// The asmjit kernels (simple, recursive, serial, churn) with their listings.
struct AsmjitKernels {
  asmjit::JitRuntime RT;
  KernelFn Fns[NumKernels] = {};
  std::string Listings[NumKernels];
  std::string Error;

  bool build(const jitlock_rt_layout &L);
};

/// shapes.ll's kernels, lowered for `Mode` and JIT-compiled.
struct LlvmKernels {
  std::unique_ptr<jitlock::JitSession> Session;
  KernelFn Fns[NumKernels] = {};
  std::string Error;

  bool build(jitlock::LockingMode Mode, const char *Name,
             const jitlock_rt_layout &L, const jitlock::JitOptions &Options);
};

/// Built by main before any benchmark is registered.
extern AsmjitKernels *Asmjit;
extern LlvmKernels *Llvm, *Heavy;
/// The kernels for reserved locking (<shape>/reserved and
/// <shape>/reserved-asmjit), lowered and emitted while the runtime was
/// configured for it with the field below; null, with the reason in
/// ReservedError, when the runtime refuses it.
constexpr uint32_t BenchReserveShift = 40, BenchReserveBits = 16;
extern LlvmKernels *LlvmReserved;
extern AsmjitKernels *AsmjitReserved;
extern std::string ReservedError;
/// The lightweight kernels for each monitor storage (jitlock_monitor_storage
/// indexes them; pointer's are Llvm and Asmjit), lowered and emitted while
/// the runtime was configured for it; null for a storage the runtime
/// refuses, with the reason in StorageError.
extern LlvmKernels *LlvmFor[3];
extern AsmjitKernels *AsmjitFor[3];
extern std::string StorageError[3];

/// Set's kernel K, or null with `Why` saying why the set has none.
template <typename KernelSet>
KernelFn kernelOf(const KernelSet &Set, Kernel K, std::string &Why) {
  if (!Set.Fns[K])
    Why = Set.Error;
  return Set.Fns[K];
}

/// The configuration every run uses, apart from the locking mode: the
/// defaults, with --jitlock-spin-limit applied.
extern jitlock_rt_config BaseConfig;
/// The repetitions of every contendedN run, whatever
/// --benchmark_repetitions says (--jitlock-contended-repetitions).
extern uint32_t ContendedRepetitions;
/// Where a Setup callback's failure waits for the run to report it.
extern std::string SetupError;
/// The two objects of the single-threaded runs.
extern Object Objs[2];
/// The Setup callback of every benchmark run on lightweight locking (and
/// pointer storage).
void setupLightweight(const benchmark::State &);
/// Configures the runtime for locking mode `Mode` (with the field above when
/// it is JITLOCK_LOCKING_RESERVED) and monitor storage `Storage` unless it
/// is already; detaches the calling thread first, and
/// shuts the runtime down first when the storage changes.
int setRuntimeConfig(uint32_t Mode, uint32_t Storage);
/// "pointer", "index", "table".
const char *storageName(uint32_t Storage);
/// The Teardown callback of a benchmark that configured another storage or
/// locking mode: back to lightweight locking with pointer storage, so that a
/// filtered run order cannot leave the runtime configured for the next one.
void restoreDefaultConfig(const benchmark::State &);

/// Registers the monitor shapes through every path (floor first), then the
/// safepoint benchmarks; the names are what scripts/bench-*.py and
/// docs/benchmarks.md know.
void registerMonitorBenchmarks();
void registerSafepointBenchmarks();
/// philosophers/<storage> (PhilosophersBench.cpp).
void registerPhilosophersBenchmarks();
/// inflate-churn/<storage> (InflateChurnBench.cpp).
void registerInflateChurnBenchmarks();
/// deflation/<monitors>/<mutators> (DeflationBench.cpp).
void registerDeflationBenchmarks(void (*Setup)(const benchmark::State &));
/// handoff/<path> and revoke/held|unheld (ReservationBench.cpp).
void registerReservationBenchmarks();
/// deopt/restore/<n> (DeoptBench.cpp).
void registerDeoptBenchmarks(void (*Setup)(const benchmark::State &));

/// The poll kernel that --jitlock-poll-loop=<path>:<n> names; NumKernels for
/// none.
Kernel pollKernel(const std::string &Path);
/// --jitlock-poll-loop: one call of a poll kernel with N iterations, for
/// counting instructions under callgrind (scripts/poll-instructions.py).
/// Returns the exit status.
int runPollLoop(KernelFn Fn, const char *Path, uint64_t N);

/// The start of one thread of a multi-threaded benchmark: attaches it
/// unless `Error` (its set-up's) is already set. On an error, or a failed
/// attach, it reports the error and runs the empty timed loop, which still
/// passes the start and stop barriers that the other threads wait at, and
/// counts the thread in `Finished`; null then tells the caller to return.
template <typename Count>
jitlock_thread *attachOrSkip(benchmark::State &St, std::string &Error,
                             std::atomic<Count> &Finished) {
  jitlock_thread *T = Error.empty() ? jitlock_rt_attach() : nullptr;
  if (Error.empty() && !T)
    Error = "jitlock_rt_attach failed";
  if (Error.empty())
    return T;
  St.SkipWithError(Error.c_str());
  for (auto _ : St) {
  }
  Finished.fetch_add(1);
  return nullptr;
}

/// The end of one thread's timed loop: detaches it (a lock still held is an
/// error) and counts it in `Finished`. Thread 0 then waits until every
/// thread has detached (deflation and the final counts need every other
/// thread out of monitor code) and returns true: it sums up the run.
template <typename Count>
bool detachAndGather(benchmark::State &St, std::string &Error,
                     std::atomic<Count> &Finished) {
  if (jitlock_rt_detach() != JITLOCK_OK)
    Error = "jitlock_rt_detach failed: a lock is still held";
  Finished.fetch_add(1);
  if (St.thread_index() != 0)
    return false;
  while (Finished.load() < Count(St.threads()))
    std::this_thread::yield();
  return true;
}

/// Calls `Add(std::integral_constant<uint32_t, Storage>())` for each monitor
/// storage, pointer, index and table: a benchmark per storage.
template <typename AddFn> void forEachStorage(AddFn Add) {
  Add(std::integral_constant<uint32_t, JITLOCK_MONITORS_POINTER>());
  Add(std::integral_constant<uint32_t, JITLOCK_MONITORS_INDEX>());
  Add(std::integral_constant<uint32_t, JITLOCK_MONITORS_TABLE>());
}

} // namespace jitlock::bench

#endif
