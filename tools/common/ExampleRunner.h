//===- ExampleRunner.h - The example convention's runner --------*- C++ -*-===//
//
// Runs a compiled module of the example convention that examples/*.ll,
// jitlock-run, jitlock-fuzz and unittests/JIT share:
//
//   void @jitlock_example_setup()                   optional, run first
//   i64  @jitlock_example_run(i64 %tid, i64 %n)     on N attached threads
//   i64  @jitlock_example_check(i64 %n)             0 iff the invariant holds
//   i64  @jitlock_example_result()                  optional, printed
//   i64  @jitlock_example_iterations                optional global, set by
//                                                   the runner before setup
//
// The runner calls each of them inside jitlock_rt_call_guarded, so that a
// stack overflow in JIT code is reported (ExampleResult::Overflows) instead
// of ending the process.
//
// This is the tools' harness, not part of the installed JIT library
// (include/jitlock/JIT.h): an embedder runs its own code its own way.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_EXAMPLERUNNER_H
#define JITLOCK_TOOLS_EXAMPLERUNNER_H

#include "SafepointThread.h"

#include "jitlock/JIT.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jitlock {

inline constexpr const char *ExampleSetup = "jitlock_example_setup";
inline constexpr const char *ExampleRun = "jitlock_example_run";
inline constexpr const char *ExampleCheck = "jitlock_example_check";
inline constexpr const char *ExampleResultFn = "jitlock_example_result";
inline constexpr const char *ExampleIterations = "jitlock_example_iterations";

struct ExampleOptions {
  unsigned Threads = 4;
  /// Stored into @jitlock_example_iterations before setup; an error when the
  /// module has no such global.
  std::optional<int64_t> Iterations;
  /// When set, a VM thread (not attached) stops the run() threads while they
  /// run: one operation every SafepointEvery microseconds, the first as the
  /// threads are released, alternately a safepoint and a
  /// jitlock_rt_handshake_all whose operation checks that it runs exactly
  /// once per target; every DeflateEvery-th safepoint calls
  /// jitlock_rt_deflate_idle while it holds the threads. It stops when the
  /// last run() thread has finished. An error when the lowered code has no
  /// safepoint poll (JitSession::safepointPollCount): a safepoint would then
  /// wait for each thread until its run() returned or blocked, or forever
  /// when it spins on a thread already stopped.
  std::optional<uint64_t> SafepointEvery;
  unsigned DeflateEvery = 4;
};

/// The nearest-rank percentile `P` (0 < P <= 1) of `Samples`; 0 when empty.
double percentile(std::vector<double> Samples, double P);

/// A stack overflow that jitlock_rt_call_guarded caught in one entry point.
struct StackOverflowReport {
  std::string Phase;     ///< "setup", "run", "check" or "result"
  int64_t Tid = -1;      ///< run()'s thread index; -1 for the others
  uint64_t ThreadId = 0; ///< jitlock_rt_thread_id of the thread
  jitlock_stack_overflow Overflow{};
  /// The objects whose holds were released, one entry per hold, in the
  /// runtime's release order (innermost first as far as it is known: the
  /// lock stack top-down, then monitors); at most the first 256.
  /// ReleasedCount counts them all.
  std::vector<void *> Released;
  size_t ReleasedCount = 0;
};

struct ExampleResult {
  int64_t Check = -1;              ///< 0 iff the invariant held
  std::optional<int64_t> Result;   ///< jitlock_example_result(), if defined
  std::vector<int64_t> RunReturns; ///< run()'s return, per thread
  double Seconds = 0;              ///< the concurrent run phase only
  /// Counters over setup, run and check (monitors_alive: at the end).
  jitlock_rt_stats Stats{};
  /// Runtime calls that failed in the driver itself, e.g. a thread that
  /// could not detach because run() returned holding a lock.
  std::vector<std::string> Problems;
  /// Stack overflows caught in an entry point (each left its thread with no
  /// lock taken inside it), in the order setup, run (by thread), check,
  /// result. An overflow in setup skips run and check.
  std::vector<StackOverflowReport> Overflows;
  /// Set with ExampleOptions::SafepointEvery. A handshake operation that ran
  /// other than once for a target, or a runtime call of the VM thread that
  /// failed, is one of Problems.
  std::optional<SafepointReport> Safepoints;
  bool ok() const {
    return Check == 0 && Problems.empty() && Overflows.empty();
  }
};

/// Runs setup, then run on `Threads` threads (each attached, all released
/// together, each detached after), then check and result, each inside
/// jitlock_rt_call_guarded. The calling
/// thread is attached for setup and check, and detached again at the end if
/// it was not attached before; an attached caller must be in `managed`.
/// Does not call jitlock_rt_shutdown: the caller
/// does, after inspecting the objects and before destroying the session.
///
/// Every wait outside JIT code is made `native`, so that a safepoint never
/// waits for it: the calling thread from the end of setup to the start of
/// check (it starts, releases and joins the threads meanwhile) and while the
/// JIT compiles, and each run() thread at the gate that releases them
/// together. Detaching waits `blocked`, in the runtime.
llvm::Expected<ExampleResult> runExample(JitSession &S,
                                         const ExampleOptions &Opts);

} // namespace jitlock

#endif
