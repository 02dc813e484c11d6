//===- ExampleRunner.cpp - Running the example convention -----------------===//
//
// runExample (ExampleRunner.h), and the VM thread that takes
// safepoints and handshakes while run() runs (ExampleOptions::SafepointEvery).
//
// Every wait here that is not in JIT code or in the runtime is made `native`
// first, or a safepoint would wait for it (the rule of docs/safepoints.md):
//
//   * the calling thread, when it was attached before, while the JIT
//     compiles (an attached thread is otherwise `managed`);
//   * the calling thread from the end of setup() to the start of check():
//     it starts the run() threads, waits for them to attach, releases them,
//     and joins them and the VM thread;
//   * each run() thread at the gate that releases them all together.
//
// The runtime's own waits need nothing: detaching waits for the operation
// lock `blocked`, and a guarded call waits for nothing (its recovery releases
// locks through the normal exit, which never parks). The overflow reports of
// the run() threads go to a slot per thread, so that no thread takes a lock
// of the runner's while `managed`.
//
//===----------------------------------------------------------------------===//
#include "ExampleRunner.h"

#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <latch>
#include <memory>
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

/// Calls an entry point of the compiled module. UBSan's -fsanitize=function
/// (in the asan preset) checks a signature word just before the callee,
/// which JIT code does not have (and which may lie on an unmapped page), so
/// the call opts out.
template <typename Fn, typename... Args>
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
static auto
callEntry(Fn *F, Args... As) {
  return F(As...);
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

/// Makes the calling thread `native` for a wait outside the runtime, when it
/// is attached and `managed`; back to `managed` at the end of the scope
/// (which waits out a safepoint in progress).
class NativeScope {
public:
  NativeScope() : Self(jitlock_rt_current()) {
    if (Self && jitlock_rt_thread_state(Self) == JITLOCK_THREAD_MANAGED)
      Entered = jitlock_rt_enter_native(Self) == JITLOCK_OK;
  }
  ~NativeScope() {
    if (Entered)
      jitlock_rt_leave_native(Self);
  }
  NativeScope(const NativeScope &) = delete;
  NativeScope &operator=(const NativeScope &) = delete;

private:
  jitlock_thread *Self;
  bool Entered = false;
};

double percentile(std::vector<double> Samples, double P) {
  if (Samples.empty())
    return 0;
  // Nearest rank: the smallest sample with at least P of them at or below.
  size_t Rank = size_t(std::ceil(P * double(Samples.size())));
  size_t I = std::clamp<size_t>(Rank, 1, Samples.size()) - 1;
  std::nth_element(Samples.begin(), Samples.begin() + I, Samples.end());
  return Samples[I];
}

namespace {

/// The checks of ExampleOptions::SafepointEvery's handshakes: the
/// operation ran exactly once for the calling thread `Main` (attached
/// throughout) and for each run() thread `Workers[I]` still attached after
/// the handshake (`Leaving[I]` is set by each just before it detaches), and
/// at most once for any other target.
SafepointThread::HandshakeCheck
checkHandshakes(jitlock_thread *Main,
                const std::vector<jitlock_thread *> &Workers,
                const std::atomic<bool> *Leaving) {
  return [Main, &Workers,
          Leaving](uint64_t Number, const HandshakeTally &Tally,
                   const std::function<void(std::string)> &Problem) {
    // A run() thread that is not leaving even now, after the handshake, was
    // attached all through it (it attached before the safepoint thread
    // started), so it must have been one of its targets. (Asked before the
    // call, the answer could be stale: a thread may leave while the call
    // waits for the operation lock.) One that is leaving may have detached
    // first.
    std::vector<bool> MustRun(Workers.size());
    for (size_t I = 0; I != Workers.size(); ++I)
      MustRun[I] = !Leaving[I].load();
    auto Name = [&](const jitlock_thread *T) {
      if (T == Main)
        return std::string("the main thread");
      for (size_t I = 0; I != Workers.size(); ++I)
        if (Workers[I] == T)
          return "run() thread " + std::to_string(I);
      char Buf[48];
      std::snprintf(Buf, sizeof Buf, "thread %p (not the runner's)",
                    static_cast<const void *>(T));
      return std::string(Buf);
    };
    std::string Which = "handshake " + std::to_string(Number) + ": ";
    for (const auto &[Target, N] : Tally.Runs)
      if (N != 1)
        Problem(Which + "the operation ran " + std::to_string(N) +
                " times for " + Name(Target));
    if (Main && Tally.runsFor(Main) == 0)
      Problem(Which + "the operation did not run for " + Name(Main));
    for (size_t I = 0; I != Workers.size(); ++I)
      if (MustRun[I] && Tally.runsFor(Workers[I]) == 0)
        Problem(Which + "the operation did not run for " + Name(Workers[I]));
  };
}

} // namespace

Expected<ExampleResult> runExample(JitSession &S, const ExampleOptions &Opts) {
  if (Opts.Threads == 0)
    return runnerError("--threads must be at least 1");
  if (Opts.SafepointEvery && *Opts.SafepointEvery == 0)
    return runnerError("--safepoint-every must be at least 1 microsecond");

  // An attached caller runs setup and check in JIT code: it must be managed.
  jitlock_thread *Caller = jitlock_rt_current();
  bool WasAttached = Caller != nullptr;
  if (Caller && jitlock_rt_thread_state(Caller) != JITLOCK_THREAD_MANAGED)
    return runnerError("the calling thread is attached but not in managed "
                       "state: it cannot call JIT code");

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
  // Threads that never poll keep a safepoint waiting until they return or
  // block, or forever when one spins on a thread that stopped: refuse that
  // rather than measure it or hang.
  if (Opts.SafepointEvery && S.safepointPollCount() == 0)
    return runnerError(
        "--safepoint-every needs safepoint polls, and the lowered code has "
        "none (no call to jitlock_rt_safepoint_poll): a safepoint would wait "
        "for each thread until its run() returned, or forever. Lower it "
        "with polls=auto (or leave the lowering to this JIT), or call "
        "jitlock.safepoint.poll in its loops");

  SetupFn *Setup = nullptr;
  ResultFn *Result = nullptr;
  RunFn *Run = nullptr;
  CheckFn *Check = nullptr;
  {
    // Compiling takes a while: an attached caller is native meanwhile.
    NativeScope Compiling;
    if (HasSetup) {
      auto F = S.lookupFunction<SetupFn>(ExampleSetup);
      if (!F)
        return F.takeError();
      Setup = *F;
    }
    auto RunF = S.lookupFunction<RunFn>(ExampleRun);
    if (!RunF)
      return RunF.takeError();
    Run = *RunF;
    auto CheckF = S.lookupFunction<CheckFn>(ExampleCheck);
    if (!CheckF)
      return CheckF.takeError();
    Check = *CheckF;
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
  }

  ExampleResult R;
  jitlock_thread *Main = jitlock_rt_attach();
  jitlock_rt_stats Before;
  jitlock_rt_get_stats(&Before);

  // Each entry point runs guarded: a stack overflow in JIT code abandons
  // it and is reported instead of ending the process.
  auto Guarded = [&](auto &&Fn, StringRef Phase) {
    std::optional<StackOverflowReport> Report = callGuarded(Fn, Phase, -1);
    if (!Report)
      return true;
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

  if (Setup && !Guarded([&] { callEntry(Setup); }, "setup")) {
    Finish();
    return R;
  }

  // All threads attach first, then start run() together.
  unsigned N = Opts.Threads;
  R.RunReturns.assign(N, 0);
  std::vector<std::string> ThreadProblems(N);
  std::vector<std::optional<StackOverflowReport>> RunOverflows(N);
  std::vector<jitlock_thread *> Workers(N);
  auto Leaving = std::make_unique<std::atomic<bool>[]>(N);
  std::latch Attached(N), Go(1);
  std::vector<std::thread> Threads;
  Threads.reserve(N);
  std::optional<SafepointThread> Driver;
  {
    // From here until every thread is joined, this thread only waits.
    NativeScope Waiting;
    for (unsigned T = 0; T != N; ++T)
      Threads.emplace_back([&, T] {
        jitlock_thread *Self = jitlock_rt_attach();
        Workers[T] = Self;
        // At the gate: safe, so that a safepoint need not wait for it.
        jitlock_rt_enter_native(Self);
        Attached.count_down();
        Go.wait();
        jitlock_rt_leave_native(Self);
        auto RunIt = [&] {
          R.RunReturns[T] = callEntry(Run, int64_t(T), int64_t(N));
        };
        RunOverflows[T] = callGuarded(RunIt, "run", int64_t(T));
        Leaving[T].store(true);
        if (int Rc = jitlock_rt_detach())
          ThreadProblems[T] = "thread " + std::to_string(T) +
                              ": jitlock_rt_detach failed with " +
                              jitlock_rt_status_name(Rc) +
                              " (run returned holding a lock)";
      });
    Attached.wait();
    if (Opts.SafepointEvery)
      Driver.emplace(*Opts.SafepointEvery, Opts.DeflateEvery,
                     checkHandshakes(Main, Workers, Leaving.get()));
    auto Start = std::chrono::steady_clock::now();
    Go.count_down();
    if (Driver)
      Driver->start();
    for (std::thread &T : Threads)
      T.join();
    R.Seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count();
    if (Driver)
      Driver->stop();
  }
  for (std::optional<StackOverflowReport> &O : RunOverflows)
    if (O)
      R.Overflows.push_back(std::move(*O));
  for (std::string &F : ThreadProblems)
    if (!F.empty())
      R.Problems.push_back(std::move(F));
  if (Driver) {
    R.Safepoints = std::move(Driver->Report);
    for (std::string &P : Driver->Problems)
      R.Problems.push_back(std::move(P));
  }

  Guarded([&] { R.Check = callEntry(Check, int64_t(N)); }, "check");
  if (Result)
    Guarded([&] { R.Result = callEntry(Result); }, "result");
  Finish();
  return R;
}

} // namespace jitlock
