//===- SafepointTest.cpp - Lowered polls, stopped and handshaken ----------===//
//
// Loops that count per-thread counters, JIT-compiled in this process with
// the lowered poll (P1 in lib/Runtime/Safepoint.cpp), run on attached
// threads while this (unattached) thread acts as the VM:
//
//   * it takes many safepoints; while each is held no counter moves (read
//     twice, a short sleep apart), and once it is released every counter
//     moves again;
//   * it handshakes each thread, and with all of them: each operation runs
//     exactly once, on the thread it targets (that thread's poll runs it,
//     since a looping thread is never safe for the requester to run it);
//   * then it stops the loops, which return their counts.
//
// Once with the frontend's poll in the loop (polls=explicit) and once with
// no poll in the IR and polls=auto from the module flag, which must place
// one on the back-edge. A loop without a poll would never let a safepoint
// begin: a watchdog fails the test then, instead of hanging.
//
// Then runExample under safepoints: its own VM thread
// (ExampleOptions::SafepointEvery) and, at the same time, one of the test's
// that takes safepoints back to back for the whole call, compilation, setup
// and check included, with an attached caller. Every wait of the runner must
// be native for that to finish; the watchdog fails the test if it does not.
//
//===----------------------------------------------------------------------===//
#include "../Runtime/Watchdog.h"
#include "DeflationWait.h"

#include "ExampleRunner.h"
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace jitlock;
using namespace llvm;

namespace {

constexpr int NumThreads = 4;
constexpr int NumSafepoints = 200;
constexpr int NumHandshakeRounds = 20;

/// @count(tid) increments @counters[tid] until @stop is set, polling once
/// per iteration (`POLL` is replaced with the poll, or with nothing), and
/// returns its count. The counter and the flag are atomic, for the VM
/// thread that reads and writes them concurrently.
const char *const CountIR = R"IR(
@counters = global [8 x i64] zeroinitializer
@stop = global i64 0

declare void @jitlock.safepoint.poll()

define i64 @count(i64 %tid) {
entry:
  %slot = getelementptr inbounds [8 x i64], ptr @counters, i64 0, i64 %tid
  br label %loop
loop:
  %n = phi i64 [ 0, %entry ], [ %n.next, %loop ]
  %n.next = add i64 %n, 1
  store atomic i64 %n.next, ptr %slot monotonic, align 8
  POLL
  %stop = load atomic i64, ptr @stop monotonic, align 8
  %done = icmp ne i64 %stop, 0
  br i1 %done, label %out, label %loop
out:
  ret i64 %n.next
}
)IR";

std::string countIR(bool ExplicitPoll, const char *PollsFlag) {
  std::string IR = CountIR;
  IR.replace(IR.find("POLL"), 4,
             ExplicitPoll ? "call void @jitlock.safepoint.poll()" : "");
  if (PollsFlag)
    IR += std::string("!llvm.module.flags = !{!0}\n"
                      "!0 = !{i32 1, !\"jitlock.polls\", !\"") +
          PollsFlag + "\"}\n";
  return IR;
}

/// Calls in `F` to `Name`.
unsigned callsTo(const Function &F, StringRef Name) {
  unsigned N = 0;
  for (const Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I))
      N +=
          CB->getCalledFunction() && CB->getCalledFunction()->getName() == Name;
  return N;
}

/// What a Watchdog says before it ends the process: a safepoint that
/// cannot complete (a loop that never polls) would otherwise hang.
void stuckAtSafepoint(const std::string &Phase) {
  std::fprintf(stderr, "watchdog: stuck in '%s': a loop that does not poll?\n",
               Phase.c_str());
}

/// What a handshake operation saw: how often it ran, and on which runtime
/// thread and OS thread.
struct HandshakeRecord {
  std::atomic<int> Runs{0};
  std::atomic<jitlock_thread *> RanOn{nullptr};
  std::atomic<jitlock_thread *> Target{nullptr};
  std::thread::id OsThread;
};

void recordHandshake(void *Arg, jitlock_thread *Target) {
  auto *R = static_cast<HandshakeRecord *>(Arg);
  R->RanOn.store(jitlock_rt_current());
  R->Target.store(Target);
  R->OsThread = std::this_thread::get_id();
  R->Runs.fetch_add(1);
}

/// handshake_all's records, one per target, found by the target.
struct AllRecords {
  jitlock_thread *const *Threads;
  HandshakeRecord Records[NumThreads];
};

void recordHandshakeAll(void *Arg, jitlock_thread *Target) {
  auto *All = static_cast<AllRecords *>(Arg);
  for (int I = 0; I != NumThreads; ++I)
    if (All->Threads[I] == Target)
      recordHandshake(&All->Records[I], Target);
}

/// Runs the scenario of the file comment on the module's @count.
void stopAndHandshake(JitSession &S) {
  auto Count = S.lookupFunction<int64_t(int64_t)>("count");
  ASSERT_TRUE(!!Count) << toString(Count.takeError());
  auto CountersAddr = S.lookup("counters");
  ASSERT_TRUE(!!CountersAddr) << toString(CountersAddr.takeError());
  auto StopAddr = S.lookup("stop");
  ASSERT_TRUE(!!StopAddr) << toString(StopAddr.takeError());
  auto *Counters = static_cast<int64_t *>(*CountersAddr);
  auto *Stop = static_cast<int64_t *>(*StopAddr);
  auto counter = [&](int I) {
    return std::atomic_ref<int64_t>(Counters[I]).load();
  };
  ASSERT_EQ(jitlock_rt_current(), nullptr) << "the VM thread is unattached";

  jitlock_thread *Threads[NumThreads] = {};
  std::thread::id OsThreads[NumThreads];
  int64_t Returned[NumThreads] = {};
  std::barrier Start(NumThreads + 1);
  std::vector<std::thread> Workers;
  for (int I = 0; I != NumThreads; ++I)
    Workers.emplace_back([&, I] {
      jitlock_thread *Self = jitlock_rt_attach();
      Threads[I] = Self;
      OsThreads[I] = std::this_thread::get_id();
      // Safe while waiting for the others, outside the runtime.
      EXPECT_EQ(jitlock_rt_enter_native(Self), JITLOCK_OK);
      Start.arrive_and_wait();
      EXPECT_EQ(jitlock_rt_leave_native(Self), JITLOCK_OK);
      Returned[I] = (*Count)(I);
      EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    });
  Start.arrive_and_wait();
  // However this function returns, the loops stop and the workers are
  // joined (this thread is unattached: joining needs no native state).
  auto StopAndJoin = [&] {
    std::atomic_ref<int64_t>(*Stop).store(1);
    for (std::thread &W : Workers)
      if (W.joinable())
        W.join();
  };
  struct Finally {
    std::function<void()> Fn;
    ~Finally() { Fn(); }
  } Joiner{StopAndJoin};

  jitlock_test::Watchdog Dog(std::chrono::seconds(60), "start",
                             stuckAtSafepoint);
  // Every counter moves past `Past`, or the test fails.
  auto expectAllMovePast = [&](const int64_t *Past, const char *When) {
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int I = 0; I != NumThreads; ++I)
      while (counter(I) <= Past[I]) {
        if (std::chrono::steady_clock::now() > Deadline) {
          ADD_FAILURE() << When << ": counter " << I << " stays at "
                        << counter(I);
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
  };
  int64_t Zero[NumThreads] = {};
  expectAllMovePast(Zero, "start");

  for (int Round = 0; Round != NumSafepoints; ++Round) {
    Dog.phase("safepoint " + std::to_string(Round));
    ASSERT_EQ(jitlock_rt_safepoint_begin(), JITLOCK_OK);
    int64_t Held[NumThreads];
    for (int I = 0; I != NumThreads; ++I)
      Held[I] = counter(I);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    for (int I = 0; I != NumThreads; ++I)
      EXPECT_EQ(counter(I), Held[I])
          << "counter " << I << " moved during safepoint " << Round;
    for (int I = 0; I != NumThreads; ++I)
      EXPECT_EQ(jitlock_rt_thread_state(Threads[I]), JITLOCK_THREAD_BLOCKED)
          << "thread " << I << " in safepoint " << Round;
    ASSERT_EQ(jitlock_rt_safepoint_end(), JITLOCK_OK);
    expectAllMovePast(Held, "after a safepoint");
    if (::testing::Test::HasFailure())
      break;
  }

  for (int Round = 0;
       Round != NumHandshakeRounds && !::testing::Test::HasFailure(); ++Round) {
    for (int I = 0; I != NumThreads; ++I) {
      Dog.phase("handshake with thread " + std::to_string(I));
      HandshakeRecord R;
      ASSERT_EQ(jitlock_rt_handshake(Threads[I], recordHandshake, &R),
                JITLOCK_OK);
      EXPECT_EQ(R.Runs.load(), 1) << "thread " << I;
      EXPECT_EQ(R.Target.load(), Threads[I]) << "thread " << I;
      EXPECT_EQ(R.RanOn.load(), Threads[I])
          << "thread " << I << "'s handshake ran on another runtime thread";
      EXPECT_EQ(R.OsThread, OsThreads[I])
          << "thread " << I << "'s handshake ran on another OS thread";
    }
    Dog.phase("handshake with every thread");
    AllRecords All{Threads, {}};
    ASSERT_EQ(jitlock_rt_handshake_all(recordHandshakeAll, &All), JITLOCK_OK);
    for (int I = 0; I != NumThreads; ++I) {
      EXPECT_EQ(All.Records[I].Runs.load(), 1) << "thread " << I;
      EXPECT_EQ(All.Records[I].RanOn.load(), Threads[I]) << "thread " << I;
      EXPECT_EQ(All.Records[I].OsThread, OsThreads[I]) << "thread " << I;
    }
  }

  Dog.phase("stopping the loops");
  StopAndJoin();
  for (int I = 0; I != NumThreads; ++I) {
    EXPECT_EQ(Returned[I], counter(I)) << "thread " << I;
    EXPECT_GT(Returned[I], NumSafepoints) << "thread " << I;
  }
}

TEST(SafepointJitTest, ExplicitPollStopsAndHandshakes) {
  auto S = JitSession::loadBuffer(countIR(/*ExplicitPoll=*/true, nullptr),
                                  "count-explicit");
  ASSERT_TRUE(!!S) << toString(S.takeError());
  const Function *F = (*S)->module().getFunction("count");
  ASSERT_NE(F, nullptr);
  EXPECT_EQ(callsTo(*F, "jitlock_rt_safepoint_poll"), 1u);
  stopAndHandshake(**S);
}

TEST(SafepointJitTest, AutoPollStopsAndHandshakes) {
  auto S = JitSession::loadBuffer(countIR(/*ExplicitPoll=*/false, "auto"),
                                  "count-auto");
  ASSERT_TRUE(!!S) << toString(S.takeError());
  const Function *F = (*S)->module().getFunction("count");
  ASSERT_NE(F, nullptr);
  // The back-edge's and the return's.
  EXPECT_EQ(callsTo(*F, "jitlock_rt_safepoint_poll"), 2u);
  stopAndHandshake(**S);
}

TEST(SafepointJitTest, ConfigStructSelectsThePollMode) {
  // LoweringConfig::Polls, the C++ route to polls=none|explicit|auto.
  for (PollMode Mode : {PollMode::None, PollMode::Explicit, PollMode::Auto}) {
    LLVMContext Ctx;
    SMDiagnostic Err;
    std::unique_ptr<Module> M =
        parseAssemblyString(countIR(/*ExplicitPoll=*/true, nullptr), Err, Ctx);
    ASSERT_NE(M, nullptr);
    LoweringConfig Config = LoweringConfig::forThisProcess();
    Config.Polls = Mode;
    ModuleAnalysisManager MAM;
    PassBuilder PB;
    PB.registerModuleAnalyses(MAM);
    ModulePassManager MPM;
    addLoweringPasses(MPM, Config);
    MPM.run(*M, MAM);
    unsigned Expected = Mode == PollMode::None   ? 0
                        : Mode == PollMode::Auto ? 2
                                                 : 1;
    EXPECT_EQ(callsTo(*M->getFunction("count"), "jitlock_rt_safepoint_poll"),
              Expected)
        << pollModeName(Mode).str();
    EXPECT_EQ(M->getFunction("jitlock.safepoint.poll"), nullptr);
  }
}

TEST(SafepointJitTest, PollsReachTheRuntimeThroughTheSymbolTable) {
  bool Listed = false;
  for (const RuntimeSymbol &Sym : runtimeSymbols())
    Listed |= StringRef(Sym.Name) == "jitlock_rt_safepoint_poll" &&
              Sym.Addr == reinterpret_cast<void *>(&jitlock_rt_safepoint_poll);
  EXPECT_TRUE(Listed);
}

TEST(SafepointJitTest, SessionCountsPollsAndUnpolledLoops) {
  struct Case {
    bool ExplicitPoll;
    const char *PollsFlag;
    std::optional<PollMode> Polls;
    PollMode PollsDefault;
    unsigned ExpectPolls;
    bool ExpectUnpolled;
  } Cases[] = {
      {false, nullptr, std::nullopt, PollMode::Explicit, 0, true},
      {true, nullptr, std::nullopt, PollMode::Explicit, 1, false},
      {false, "auto", std::nullopt, PollMode::Explicit, 2, false},
      // PollsDefault applies only when nothing else chooses.
      {false, nullptr, std::nullopt, PollMode::Auto, 2, false},
      {false, "explicit", std::nullopt, PollMode::Auto, 0, true},
      {true, nullptr, PollMode::None, PollMode::Auto, 0, true},
  };
  for (const Case &C : Cases) {
    JitOptions Opts;
    Opts.Polls = C.Polls;
    Opts.PollsDefault = C.PollsDefault;
    std::string Name = std::string("count-") + (C.ExplicitPoll ? "poll-" : "") +
                       (C.PollsFlag ? C.PollsFlag : "noflag") + "-" +
                       pollModeName(C.Polls.value_or(C.PollsDefault)).str();
    auto S = JitSession::loadBuffer(countIR(C.ExplicitPoll, C.PollsFlag), Name,
                                    Opts);
    ASSERT_TRUE(!!S) << Name << ": " << toString(S.takeError());
    EXPECT_EQ((*S)->safepointPollCount(), C.ExpectPolls) << Name;
    std::vector<std::string> Unpolled = (*S)->functionsWithUnpolledLoops();
    EXPECT_EQ(Unpolled, C.ExpectUnpolled ? std::vector<std::string>{"count"}
                                         : std::vector<std::string>{})
        << Name;
  }
}

TEST(SafepointJitTest, ConflictingPollsAreRefused) {
  JitOptions Opts;
  Opts.Polls = PollMode::None;
  auto S =
      JitSession::loadBuffer(countIR(false, "auto"), "count-conflict", Opts);
  ASSERT_FALSE(!!S);
  EXPECT_NE(toString(S.takeError()).find("conflicting configuration"),
            std::string::npos);
}

TEST(SafepointJitTest, RunExampleRefusesCodeWithoutPolls) {
  JitOptions Opts;
  Opts.Polls = PollMode::None;
  auto S = JitSession::loadFile(JITLOCK_EXAMPLES_DIR "/counter.ll", Opts);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  ExampleOptions EO;
  EO.Threads = 2;
  EO.SafepointEvery = 100;
  auto R = runExample(**S, EO);
  ASSERT_FALSE(!!R);
  EXPECT_NE(toString(R.takeError()).find("needs safepoint polls"),
            std::string::npos);
}

/// A VM thread, not attached, that takes safepoints back to back until it
/// goes out of scope.
class BackToBackSafepoints {
public:
  BackToBackSafepoints()
      : Thread([this] {
          while (!Done.load()) {
            if (jitlock_rt_safepoint_begin() != JITLOCK_OK) {
              ADD_FAILURE() << "jitlock_rt_safepoint_begin failed";
              return;
            }
            jitlock_rt_safepoint_end();
            Taken.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::microseconds(20));
          }
        }) {}
  ~BackToBackSafepoints() {
    Done.store(true);
    Thread.join();
  }
  uint64_t taken() const { return Taken.load(); }

private:
  std::atomic<bool> Done{false};
  std::atomic<uint64_t> Taken{0};
  std::thread Thread;
};

/// runExample on `Example` from an attached caller, with its VM thread and
/// the test's at the same time; with `DeflationThread`, the runtime's
/// deflation thread too, deflating whatever is idle every millisecond while
/// the inline fast paths run.
void runUnderSafepoints(const char *Example, bool DeflationThread = false) {
  JitOptions Opts;
  Opts.PollsDefault = PollMode::Auto;
  auto S = JitSession::loadFile(
      std::string(JITLOCK_EXAMPLES_DIR "/") + Example + ".ll", Opts);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  jitlock_deflation_stats D0{};
  jitlock_rt_get_deflation_stats(&D0);
  if (DeflationThread) {
    jitlock_deflation_policy P;
    jitlock_rt_default_deflation_policy(&P);
    P.period_ms = 1;
    P.idle_threshold = 1;
    ASSERT_EQ(jitlock_rt_start_deflation(&P), JITLOCK_OK);
  }
  {
    BackToBackSafepoints Vm;
    // An attached caller: runExample must make its waits native itself,
    // compilation included.
    jitlock_thread *Caller = jitlock_rt_attach();
    ASSERT_NE(Caller, nullptr);
    ExampleOptions EO;
    EO.Threads = 4;
    EO.SafepointEvery = 100;
    EO.DeflateEvery = 1;
    auto R = runExample(**S, EO);
    uint64_t Taken = Vm.taken();
    // Still attached, and back in managed.
    EXPECT_EQ(jitlock_rt_current(), Caller);
    EXPECT_EQ(jitlock_rt_thread_state(Caller), JITLOCK_THREAD_MANAGED);
    // Detaching waits for the test's safepoints, blocked.
    EXPECT_EQ(jitlock_rt_detach(), JITLOCK_OK);
    ASSERT_TRUE(!!R) << toString(R.takeError());
    EXPECT_EQ(R->Check, 0);
    EXPECT_TRUE(R->Problems.empty())
        << (R->Problems.empty() ? "" : R->Problems[0]);
    ASSERT_TRUE(R->Safepoints.has_value());
    EXPECT_GT(R->Safepoints->safepoints(), 0u);
    EXPECT_EQ(R->Safepoints->Deflations, R->Safepoints->safepoints())
        << "DeflateEvery = 1 deflates in every safepoint";
    EXPECT_GT(Taken, 0u);
  }
  if (DeflationThread) {
    EXPECT_TRUE(jitlock_test::waitForDeflationCycle(D0.thread_cycles))
        << "the deflation thread ran no cycle in 10 s";
    ASSERT_EQ(jitlock_rt_stop_deflation(), JITLOCK_OK);
    jitlock_deflation_stats D1{};
    jitlock_rt_get_deflation_stats(&D1);
    EXPECT_GT(D1.thread_cycles, D0.thread_cycles);
    std::printf(
        "  %s: the deflation thread ran %llu cycles; %llu monitors "
        "deflated (every deflater), %llu cancelled by enterers\n",
        Example, (unsigned long long)(D1.thread_cycles - D0.thread_cycles),
        (unsigned long long)(D1.monitors_deflated - D0.monitors_deflated),
        (unsigned long long)(D1.cancelled - D0.cancelled));
  }
  // Inflated headers live in the session's memory: restored before it goes.
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

TEST(SafepointJitTest, RunExampleWaitsNativeUnderSafepoints) {
  ASSERT_EQ(jitlock_rt_current(), nullptr);
  jitlock_test::Watchdog Dog(std::chrono::seconds(90), "start",
                             stuckAtSafepoint);
  for (const char *Example : {"counter", "prodcons", "bank"}) {
    Dog.phase(std::string("runExample on ") + Example);
    SCOPED_TRACE(Example);
    runUnderSafepoints(Example);
  }
}

// The same with the deflation thread on: the inline paths meet monitors
// being deflated (A1-A6 in lib/Runtime/Synchronizer.cpp) and the invariants
// hold.
TEST(SafepointJitTest, RunExampleUnderTheDeflationThread) {
  ASSERT_EQ(jitlock_rt_current(), nullptr);
  jitlock_test::Watchdog Dog(std::chrono::seconds(90), "start",
                             stuckAtSafepoint);
  for (const char *Example : {"counter", "prodcons", "bank"}) {
    Dog.phase(std::string("runExample with the deflation thread on ") +
              Example);
    SCOPED_TRACE(Example);
    runUnderSafepoints(Example, /*DeflationThread=*/true);
  }
}

} // namespace
