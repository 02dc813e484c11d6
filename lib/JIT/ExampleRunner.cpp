//===- ExampleRunner.cpp - Running the example convention -----------------===//
#include "jitlock/JIT.h"

#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <latch>
#include <mutex>
#include <optional>
#include <thread>

using namespace llvm;

namespace jitlock {

using SetupFn = void();
using RunFn = int64_t(int64_t, int64_t);
using CheckFn = int64_t(int64_t);
using ResultFn = int64_t();

static Error runnerError(const Twine &Msg) {
  return make_error<StringError>(Msg, inconvertibleErrorCode());
}

/// How many released objects a report lists.
constexpr size_t MaxReleasedListed = 256;

/// Calls `Fn` inside jitlock_rt_call_guarded on the calling (attached)
/// thread. Returns the overflow report when the call overflowed its stack
/// and was abandoned. `Fn`'s frames may be abandoned: it must own nothing
/// that needs destroying.
template <typename Callable>
static std::optional<StackOverflowReport>
callGuarded(Callable &Fn, StringRef Phase, int64_t Tid) {
  StackOverflowReport Report;
  Report.Released.resize(MaxReleasedListed);
  jitlock_guarded_result Result{};
  Result.released = Report.Released.data();
  Result.released_cap = Report.Released.size();
  int Rc = jitlock_rt_call_guarded(
      jitlock_rt_current(), [](void *F) { (*static_cast<Callable *>(F))(); },
      &Fn, &Result);
  if (Rc != JITLOCK_ESTACK_OVERFLOW)
    return std::nullopt;
  Report.Phase = Phase.str();
  Report.Tid = Tid;
  Report.Overflow = Result.overflow;
  Report.ThreadId = jitlock_rt_thread_id(jitlock_rt_current());
  Report.ReleasedCount = Result.released_count;
  Report.Released.resize(std::min(Result.released_count, MaxReleasedListed));
  return Report;
}

/// Counters over an interval; monitors_alive is a level, not a count.
static jitlock_rt_stats statsSince(const jitlock_rt_stats &Before) {
  jitlock_rt_stats Now;
  jitlock_rt_get_stats(&Now);
  jitlock_rt_stats D = Now;
  D.fast_locks -= Before.fast_locks;
  D.recursive_locks -= Before.recursive_locks;
  D.monitor_enters -= Before.monitor_enters;
  D.inflations -= Before.inflations;
  D.contended_enters -= Before.contended_enters;
  D.parks -= Before.parks;
  D.slow_path_calls -= Before.slow_path_calls;
  D.waits -= Before.waits;
  D.notifies -= Before.notifies;
  return D;
}

Expected<ExampleResult> runExample(JitSession &S, const ExampleOptions &Opts) {
  if (Opts.Threads == 0)
    return runnerError("--threads must be at least 1");

  // Check every signature before calling anything: calling JIT code through
  // a mismatched type would be undefined behaviour, not an error.
  bool HasSetup = S.definesFunction(ExampleSetup);
  bool HasResult = S.definesFunction(ExampleResultFn);
  if (HasSetup)
    if (Error E = S.checkFunction(ExampleSetup, "void ()"))
      return std::move(E);
  if (Error E = S.checkFunction(ExampleRun, "i64 (i64, i64)"))
    return std::move(E);
  if (Error E = S.checkFunction(ExampleCheck, "i64 (i64)"))
    return std::move(E);
  if (HasResult)
    if (Error E = S.checkFunction(ExampleResultFn, "i64 ()"))
      return std::move(E);
  if (Opts.Iterations) {
    const GlobalVariable *GV = S.module().getGlobalVariable(ExampleIterations);
    if (!GV || GV->isDeclaration() || GV->isConstant() ||
        !GV->getValueType()->isIntegerTy(64))
      return runnerError(Twine("--iterations needs the module to define a "
                               "non-constant global i64 @") +
                         ExampleIterations);
  }

  SetupFn *Setup = nullptr;
  ResultFn *Result = nullptr;
  if (HasSetup) {
    auto F = S.lookupFunction<SetupFn>(ExampleSetup);
    if (!F)
      return F.takeError();
    Setup = *F;
  }
  auto Run = S.lookupFunction<RunFn>(ExampleRun);
  if (!Run)
    return Run.takeError();
  auto Check = S.lookupFunction<CheckFn>(ExampleCheck);
  if (!Check)
    return Check.takeError();
  if (HasResult) {
    auto F = S.lookupFunction<ResultFn>(ExampleResultFn);
    if (!F)
      return F.takeError();
    Result = *F;
  }
  if (Opts.Iterations) {
    auto Addr = S.lookup(ExampleIterations);
    if (!Addr)
      return Addr.takeError();
    int64_t N = *Opts.Iterations;
    std::memcpy(*Addr, &N, sizeof N);
  }

  ExampleResult R;
  bool WasAttached = jitlock_rt_current() != nullptr;
  jitlock_rt_attach();
  jitlock_rt_stats Before;
  jitlock_rt_get_stats(&Before);

  // Each entry point runs guarded: a stack overflow in JIT code abandons
  // it and is reported instead of ending the process.
  std::mutex OverflowsLock;
  auto Guarded = [&](auto &&Fn, StringRef Phase, int64_t Tid) {
    std::optional<StackOverflowReport> Report = callGuarded(Fn, Phase, Tid);
    if (!Report)
      return true;
    std::lock_guard<std::mutex> Hold(OverflowsLock);
    R.Overflows.push_back(std::move(*Report));
    return false;
  };
  auto Finish = [&] {
    R.Stats = statsSince(Before);
    if (!WasAttached)
      if (int Rc = jitlock_rt_detach())
        R.Problems.push_back(
            std::string("main thread: jitlock_rt_detach failed with ") +
            jitlock_rt_status_name(Rc) + " (setup or check left a lock held)");
  };

  if (Setup && !Guarded([&] { Setup(); }, "setup", -1)) {
    Finish();
    return R;
  }

  // All threads attach first, then start run() together.
  unsigned N = Opts.Threads;
  R.RunReturns.assign(N, 0);
  std::vector<std::string> DetachFailures(N);
  std::latch Attached(N), Go(1);
  std::vector<std::thread> Threads;
  Threads.reserve(N);
  for (unsigned T = 0; T != N; ++T)
    Threads.emplace_back([&, T] {
      jitlock_rt_attach();
      Attached.count_down();
      Go.wait();
      Guarded([&] { R.RunReturns[T] = (*Run)(int64_t(T), int64_t(N)); }, "run",
              int64_t(T));
      if (int Rc = jitlock_rt_detach())
        DetachFailures[T] =
            "thread " + std::to_string(T) + ": jitlock_rt_detach failed with " +
            jitlock_rt_status_name(Rc) + " (run returned holding a lock)";
    });
  Attached.wait();
  auto Start = std::chrono::steady_clock::now();
  Go.count_down();
  for (std::thread &T : Threads)
    T.join();
  R.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  for (std::string &F : DetachFailures)
    if (!F.empty())
      R.Problems.push_back(std::move(F));

  Guarded([&] { R.Check = (*Check)(int64_t(N)); }, "check", -1);
  if (Result)
    Guarded([&] { R.Result = Result(); }, "result", -1);
  Finish();
  return R;
}

} // namespace jitlock
