//===- jitlock-bench/DeoptBench.cpp - One deopt with lock restoration -----===//
//
// What a deopt costs, lock restoration included (docs/deopt.md):
//
//   deopt/restore/<n>
//            one call of a JIT-compiled function that holds the first of n
//            objects, has elided the n - 1 locks nested inside it, and
//            deoptimizes at once: the entry stub, the stack map lookup and
//            decoding, jitlock_rt_restore_locks (n - 1 acquisitions, the
//            frame's lock stack replayed), the Resume handler calling the
//            baseline continuation, whose n inline exits release everything,
//            and the return through callDeoptimizable.
//
// Counters: ns_per_deopt, inflations_per_deopt (0 up to 8 monitors: the lock
// stack holds them all; with 9 the oldest entry goes to a monitor) and
// monitors_alive after the run (0).
//
//===----------------------------------------------------------------------===//
#include "Bench.h"

#include "jitlock/Deopt.h"
#include "jitlock/JIT.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace {

using namespace jitlock::deopt;

constexpr unsigned Sizes[] = {1, 4, 9};

/// @deopt<n>.opt(ptr objs) and @deopt<n>.cont(ptr objs), objects 64 bytes
/// apart.
std::string deoptIR() {
  std::string IR = "declare void @jitlock.monitor.enter(ptr)\n"
                   "declare void @jitlock.monitor.exit(ptr)\n"
                   "declare i64 @llvm.experimental.deoptimize.i64(...)\n";
  for (unsigned N : Sizes) {
    std::string Fn = "@deopt" + std::to_string(N);
    std::string Objs, Group, Exits;
    for (unsigned I = 0; I != N; ++I) {
      std::string O = "%o" + std::to_string(I);
      Objs += "  " + O + " = getelementptr [64 x i8], ptr %objs, i64 " +
              std::to_string(I) + "\n";
      Group += ", ptr " + O + ", i32 " + (I ? "1" : "0");
    }
    for (unsigned I = N; I-- != 0;)
      Exits += "  call void @jitlock.monitor.exit(ptr %o" + std::to_string(I) +
               ")\n";
    IR += "define i64 " + Fn + ".opt(ptr %objs) {\n" + Objs +
          "  call void @jitlock.monitor.enter(ptr %o0)\n"
          "  %r = call i64 (...) @llvm.experimental.deoptimize.i64() "
          "[ \"deopt\"(ptr %objs, i32 " +
          std::to_string(MonitorsMarker) + ", i32 " + std::to_string(N) +
          Group + ") ]\n  ret i64 %r\n}\n";
    IR += "define i64 " + Fn + ".cont(ptr %objs) {\n" + Objs + Exits +
          "  ret i64 1\n}\n";
  }
  return IR;
}

using Fn = uint64_t (*)(void *);

struct Compiled {
  std::unique_ptr<jitlock::JitSession> Session;
  std::map<unsigned, Fn> Opt;
  std::map<uint64_t, Fn> ContOf; // by the .opt function's address
  std::string Error;
};

Compiled &compiled() {
  static Compiled C = [] {
    Compiled C;
    jitlock::JitOptions Opts;
    Opts.ConfigureJit = enableDeopt;
    auto S = jitlock::JitSession::loadBuffer(deoptIR(), "deopt.ll", Opts);
    if (!S) {
      C.Error = llvm::toString(S.takeError());
      return C;
    }
    C.Session = std::move(*S);
    for (unsigned N : Sizes) {
      std::string Name = "deopt" + std::to_string(N);
      auto Opt = C.Session->lookupFunction<uint64_t(void *)>(Name + ".opt");
      auto Cont = C.Session->lookupFunction<uint64_t(void *)>(Name + ".cont");
      if (!Opt || !Cont) {
        C.Error = llvm::toString(
            llvm::joinErrors(Opt ? llvm::Error::success() : Opt.takeError(),
                             Cont ? llvm::Error::success() : Cont.takeError()));
        return C;
      }
      C.Opt[N] = *Opt;
      C.ContOf[reinterpret_cast<uint64_t>(*Opt)] = *Cont;
    }
    return C;
  }();
  return C;
}

uint64_t resume(const DeoptFrame &F, void *) {
  return compiled().ContOf.at(F.FunctionAddress)(
      reinterpret_cast<void *>(F.Values[0]));
}

uint64_t failed(const DeoptFailure &, void *Ctx) {
  static_cast<std::atomic<uint64_t> *>(Ctx)->fetch_add(1);
  return 0;
}

void runDeopt(benchmark::State &St, unsigned N) {
  using namespace jitlock::bench;
  if (!SetupError.empty())
    return St.SkipWithError(SetupError.c_str());
  Compiled &C = compiled();
  if (!C.Error.empty())
    return St.SkipWithError(C.Error.c_str());
  if (jitlock_rt_current())
    return St.SkipWithError("the benchmark thread is attached already");
  if (!jitlock_rt_attach())
    return St.SkipWithError("jitlock_rt_attach failed");
  std::atomic<uint64_t> Failures{0};
  DeoptHandlers H;
  H.Resume = resume;
  H.Failed = failed;
  H.Ctx = &Failures;
  setDeoptHandlers(&H);
  std::unique_ptr<Object[]> Objs(new Object[N]());
  for (unsigned I = 0; I != N; ++I)
    Objs[I].Header = 1;
  Fn Opt = C.Opt.at(N);
  jitlock_rt_stats S0{}, S1{};
  jitlock_rt_get_stats(&S0);
  uint64_t Deopts = 0;
  auto Start = std::chrono::steady_clock::now();
  for (auto _ : St) {
    benchmark::DoNotOptimize(callDeoptimizable(Opt, (void *)Objs.get()));
    ++Deopts;
  }
  double Ns = std::chrono::duration<double, std::nano>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
  setDeoptHandlers(nullptr);
  // Monitors the 9-object frame inflated go back to their objects.
  jitlock_rt_deflate_idle();
  jitlock_rt_get_stats(&S1);
  if (jitlock_rt_detach() != JITLOCK_OK)
    return St.SkipWithError("jitlock_rt_detach failed: a lock was left held");
  if (Failures)
    return St.SkipWithError("a deopt failed");
  St.counters["ns_per_deopt"] = Deopts ? Ns / double(Deopts) : 0;
  St.counters["inflations_per_deopt"] =
      Deopts ? double(S1.inflations - S0.inflations) / double(Deopts) : 0;
  St.counters["monitors_alive"] = double(S1.monitors_alive);
}

} // namespace

void jitlock::bench::registerDeoptBenchmarks(
    void (*Setup)(const benchmark::State &)) {
  for (unsigned N : Sizes) {
    std::string Name = "deopt/restore/" + std::to_string(N);
    auto *B = benchmark::RegisterBenchmark(
        Name.c_str(), [N](benchmark::State &St) { runDeopt(St, N); });
    if (Setup)
      B->Setup(Setup);
  }
}
