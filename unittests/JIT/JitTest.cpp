//===- JitTest.cpp - The examples under the in-process JIT ----------------===//
//
// Every examples/*.ll JIT-compiled in this process and run on 4 threads; the
// same modules lowered once with the inline fast paths and once with every
// operation sent to the runtime's C functions, compared; and the refusals:
// bad input must come back as an llvm::Error, never a crash.
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"
#include "ExampleRunner.h"
#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "../Runtime/RuntimeTestUtil.h"
#include "LoweredPair.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <dlfcn.h>
#include <string>
#include <vector>

using namespace jitlock;
using namespace llvm;

namespace {

std::string examplePath(const std::string &Name) {
  return std::string(JITLOCK_EXAMPLES_DIR) + "/" + Name + ".ll";
}
std::string inputPath(const std::string &Name) {
  return std::string(JITLOCK_JIT_INPUTS_DIR) + "/" + Name;
}

/// Iterations small enough to keep the suite quick, large enough to
/// contend on 4 threads.
int64_t iterationsFor(const std::string &Name) {
  if (Name == "recursive")
    return 2000;
  if (Name == "prodcons")
    return 5000;
  return 20000;
}

const char *const Examples[] = {"counter", "recursive", "bank", "prodcons"};

/// One object's lock, as jitlock_rt_inspect and the header word show it.
struct ObjectState {
  std::string Name;
  jitlock_lock_info Info{};
  uint64_t Header = 0;
};

std::vector<ObjectState> snapshot(const std::vector<ModuleObject> &Objects) {
  std::vector<ObjectState> Out;
  for (const ModuleObject &O : Objects) {
    ObjectState S;
    S.Name = O.Name;
    EXPECT_EQ(jitlock_rt_inspect(O.Addr, &S.Info), JITLOCK_OK) << O.Name;
    S.Header = reinterpret_cast<std::atomic<uint64_t> *>(O.Addr)->load();
    Out.push_back(S);
  }
  return Out;
}

/// Nobody holds, waits for or queues on any object.
void expectAllReleased(const std::vector<ObjectState> &States,
                       const std::string &Where) {
  for (const ObjectState &S : States) {
    EXPECT_TRUE(S.Info.state == JITLOCK_STATE_UNLOCKED ||
                S.Info.state == JITLOCK_STATE_INFLATED)
        << Where << ": " << S.Name << " state " << S.Info.state;
    EXPECT_EQ(S.Info.owner, nullptr) << Where << ": " << S.Name;
    EXPECT_EQ(S.Info.anonymous_owner, 0u) << Where << ": " << S.Name;
    EXPECT_EQ(S.Info.holds, 0u) << Where << ": " << S.Name;
    EXPECT_EQ(S.Info.entry_queued, 0u) << Where << ": " << S.Name;
    EXPECT_EQ(S.Info.waiting, 0u) << Where << ": " << S.Name;
  }
}

/// What one run of one build left behind.
struct Outcome {
  ExampleResult Result;
  std::vector<ObjectState> Before; ///< after check, before shutdown
  std::vector<ObjectState> After;  ///< after jitlock_rt_shutdown
};

/// Loads, runs, inspects and shuts the runtime down (before the session,
/// whose memory holds the objects, goes away).
std::optional<Outcome> runOnce(const std::string &Name, bool Inline,
                               unsigned Threads,
                               std::optional<int64_t> Iterations = {}) {
  JitOptions JO;
  JO.Inline = Inline;
  auto S = JitSession::loadFile(examplePath(Name), JO);
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return std::nullopt;
  }
  ExampleOptions EO;
  EO.Threads = Threads;
  EO.Iterations = Iterations ? *Iterations : iterationsFor(Name);
  auto R = runExample(**S, EO);
  if (!R) {
    ADD_FAILURE() << toString(R.takeError());
    return std::nullopt;
  }
  auto Objects = (*S)->objects();
  if (!Objects) {
    ADD_FAILURE() << toString(Objects.takeError());
    return std::nullopt;
  }
  EXPECT_FALSE(Objects->empty()) << Name << " has no lock objects";
  Outcome O;
  O.Result = std::move(*R);
  O.Before = snapshot(*Objects);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  O.After = snapshot(*Objects);
  return O;
}

/// `Threads` threads, with `Iterations` stored first if set.
ExampleOptions threads(unsigned Threads,
                       std::optional<int64_t> Iterations = std::nullopt) {
  ExampleOptions EO;
  EO.Threads = Threads;
  EO.Iterations = Iterations;
  return EO;
}

/// The error runExample reports for `S`, or "" when it runs.
std::string runError(JitSession &S, const ExampleOptions &EO = {}) {
  auto R = runExample(S, EO);
  return R ? std::string() : toString(R.takeError());
}

/// `S` loads, and runExample refuses it with an error that contains
/// `Needle`.
void expectRunRefused(Expected<std::unique_ptr<JitSession>> S,
                      const std::string &Needle,
                      const ExampleOptions &EO = {}) {
  ASSERT_TRUE(!!S) << toString(S.takeError());
  std::string Msg = runError(**S, EO);
  ASSERT_FALSE(Msg.empty());
  EXPECT_NE(Msg.find(Needle), std::string::npos) << Msg;
}

/// The lowered IR of example `Name`, as JitSession prints it.
std::string loweredExample(const char *Name) {
  auto S = JitSession::loadFile(examplePath(Name));
  if (!S) {
    ADD_FAILURE() << toString(S.takeError());
    return {};
  }
  std::string IR;
  raw_string_ostream OS(IR);
  (*S)->printIR(OS);
  return IR;
}

std::string describe(const ExampleResult &R) {
  std::string S = "check=" + std::to_string(R.Check);
  if (R.Result)
    S += " result=" + std::to_string(*R.Result);
  for (const std::string &P : R.Problems)
    S += "; " + P;
  return S;
}

//===----------------------------------------------------------------------===//
// Every example holds its invariant
//===----------------------------------------------------------------------===//

class ExampleTest : public ::testing::TestWithParam<const char *> {};

/// A run whose threads never met at a lock proves nothing about the lock:
/// the example runs again, on a fresh module with twice the iterations (up
/// to 64 times the first run's), until the runtime counted a contended enter,
/// at most MaxRuns times. (Threads that share few free cores can each finish
/// inside one time slice; longer runs get them preempted inside the lock.)
TEST_P(ExampleTest, InvariantHoldsOnFourThreads) {
  std::string Name = GetParam();
  constexpr unsigned MaxRuns = 12, MaxScaleLog2 = 6;
  uint64_t Contended = 0;
  for (unsigned Run = 0; Run != MaxRuns && !Contended; ++Run) {
    const int64_t Iterations = iterationsFor(Name)
                               << std::min(Run, MaxScaleLog2);
    SCOPED_TRACE(Name + " with " + std::to_string(Iterations) + " iterations");
    auto O = runOnce(Name, /*Inline=*/true, 4, Iterations);
    ASSERT_TRUE(O);
    EXPECT_TRUE(O->Result.ok()) << describe(O->Result);
    EXPECT_EQ(O->Result.Check, 0);
    EXPECT_EQ(O->Result.RunReturns.size(), 4u);
    expectAllReleased(O->Before, Name);
    for (const ObjectState &S : O->After)
      EXPECT_EQ(S.Info.state, JITLOCK_STATE_UNLOCKED) << S.Name;
    Contended = O->Result.Stats.contended_enters;
  }
  EXPECT_GT(Contended, 0u) << Name << ": no contended enter in " << MaxRuns
                           << " runs";
}

//===----------------------------------------------------------------------===//
// Differential: inline fast paths against runtime calls only
//===----------------------------------------------------------------------===//

void compareBuilds(const std::string &Name, unsigned Threads) {
  SCOPED_TRACE(Name + " on " + std::to_string(Threads) + " threads");
  auto Inline = runOnce(Name, /*Inline=*/true, Threads);
  auto Runtime = runOnce(Name, /*Inline=*/false, Threads);
  ASSERT_TRUE(Inline && Runtime);

  EXPECT_TRUE(Inline->Result.ok()) << describe(Inline->Result);
  EXPECT_TRUE(Runtime->Result.ok()) << describe(Runtime->Result);
  EXPECT_EQ(Inline->Result.Check, Runtime->Result.Check);
  EXPECT_EQ(Inline->Result.Result, Runtime->Result.Result);

  ASSERT_EQ(Inline->Before.size(), Runtime->Before.size());
  expectAllReleased(Inline->Before, "inline");
  expectAllReleased(Runtime->Before, "runtime-only");
  for (size_t I = 0; I != Inline->Before.size(); ++I) {
    const ObjectState &A = Inline->Before[I], &B = Runtime->Before[I];
    ASSERT_EQ(A.Name, B.Name);
    EXPECT_EQ(A.Info.owner, B.Info.owner) << A.Name;
    EXPECT_EQ(A.Info.holds, B.Info.holds) << A.Name;
    // Which objects contention inflated depends on the schedule; with one
    // running thread nothing contends, and both builds must inflate exactly
    // the same objects (non-adjacent re-entry, a full lock stack, wait).
    if (Threads == 1) {
      EXPECT_EQ(A.Info.state, B.Info.state) << A.Name;
      EXPECT_EQ(Inline->Result.RunReturns, Runtime->Result.RunReturns);
    }
    // After shutdown every header is back to its unlocked form.
    const ObjectState &AA = Inline->After[I], &BA = Runtime->After[I];
    EXPECT_EQ(AA.Info.state, JITLOCK_STATE_UNLOCKED) << A.Name;
    EXPECT_EQ(AA.Info.state, BA.Info.state) << A.Name;
    EXPECT_EQ(AA.Info.owner, BA.Info.owner) << A.Name;
    EXPECT_EQ(AA.Info.holds, BA.Info.holds) << A.Name;
    EXPECT_EQ(AA.Header, BA.Header) << A.Name;
  }
}

TEST_P(ExampleTest, InlineAndRuntimeOnlyAgreeOnFourThreads) {
  compareBuilds(GetParam(), 4);
}

TEST_P(ExampleTest, InlineAndRuntimeOnlyAgreeOnOneThread) {
  compareBuilds(GetParam(), 1);
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest, ::testing::ValuesIn(Examples),
                         [](const auto &Info) {
                           return std::string(Info.param);
                         });

//===----------------------------------------------------------------------===//
// The lowering the session chose
//===----------------------------------------------------------------------===//

unsigned countInstructions(const Module &M,
                           function_ref<bool(const Instruction &)> P) {
  unsigned N = 0;
  for (const Function &F : M)
    for (const Instruction &I : instructions(F))
      N += P(I);
  return N;
}

bool callsTo(const Instruction &I, StringRef Name) {
  auto *CB = dyn_cast<CallBase>(&I);
  return CB && CB->getCalledFunction() &&
         CB->getCalledFunction()->getName() == Name;
}

TEST(JitSessionTest, InlineBuildHasFastPathsRuntimeOnlyHasCalls) {
  auto Inline = JitSession::loadFile(examplePath("counter"));
  ASSERT_TRUE(!!Inline) << toString(Inline.takeError());
  JitOptions JO;
  JO.Inline = false;
  auto Runtime = JitSession::loadFile(examplePath("counter"), JO);
  ASSERT_TRUE(!!Runtime) << toString(Runtime.takeError());

  auto IsCas = [](const Instruction &I) { return isa<AtomicCmpXchgInst>(I); };
  const Module &MI = (*Inline)->module(), &MR = (*Runtime)->module();
  EXPECT_GT(countInstructions(MI, IsCas), 0u);
  EXPECT_EQ(countInstructions(MR, IsCas), 0u);
  EXPECT_GT(countInstructions(MR,
                              [](const Instruction &I) {
                                return callsTo(I,
                                               "jitlock_rt_monitor_enter_slow");
                              }),
            0u);
  // TLS mode with this process's offset, in both.
  EXPECT_NE(MI.getFunction("llvm.thread.pointer"), nullptr);
  EXPECT_NE(MR.getFunction("llvm.thread.pointer"), nullptr);
  EXPECT_EQ(MI.getFunction("jitlock.monitor.enter"), nullptr);
  // Stamped with this runtime's layout.
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  auto *Stamp = dyn_cast_or_null<MDString>(MI.getModuleFlag(LoweredLayoutFlag));
  ASSERT_NE(Stamp, nullptr);
  EXPECT_EQ(Stamp->getString(), layoutFingerprint(L));
}

TEST(JitSessionTest, PrintsAssembly) {
  auto S = JitSession::loadFile(examplePath("counter"));
  ASSERT_TRUE(!!S) << toString(S.takeError());
  std::string Asm;
  raw_string_ostream OS(Asm);
  ASSERT_FALSE(!!(*S)->printAssembly(OS));
  EXPECT_NE(Asm.find("jitlock_example_run:"), std::string::npos);
  // Printing does not stop the module from running afterwards.
  auto R = runExample(**S, threads(1, 100));
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(R->Check, 0);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

TEST(JitSessionTest, RuntimeComesFromTheSymbolTableNotTheProcess) {
  // This test binary is not linked -rdynamic: the runtime is invisible to
  // dlsym, and JIT code still reaches it, through runtimeSymbols().
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "jitlock_rt_monitor_enter"), nullptr);
  bool Listed = false;
  for (const RuntimeSymbol &S : runtimeSymbols())
    Listed |= StringRef(S.Name) == "jitlock_rt_monitor_enter" &&
              S.Addr == reinterpret_cast<void *>(&jitlock_rt_monitor_enter);
  EXPECT_TRUE(Listed);
  JitOptions JO;
  JO.Inline = false;
  auto S = JitSession::loadFile(examplePath("counter"), JO);
  ASSERT_TRUE(!!S) << toString(S.takeError());
  auto R = runExample(**S, threads(2, 1000));
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(R->Check, 0);
  EXPECT_GE(R->Stats.slow_path_calls, 4000u);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

TEST(JitSessionTest, AcceptsItsOwnPreLoweredOutput) {
  // The printed lowered module carries this runtime's stamp: a second
  // session accepts it, and the lowering does not run twice.
  std::string IR = loweredExample("bank");
  ASSERT_FALSE(IR.empty());
  auto Again = JitSession::loadBuffer(IR, "bank.lowered.ll");
  ASSERT_TRUE(!!Again) << toString(Again.takeError());
  auto R = runExample(**Again, threads(4, 5000));
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_TRUE(R->ok()) << describe(*R);
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

//===----------------------------------------------------------------------===//
// Inline code on a thread that is not attached
//===----------------------------------------------------------------------===//

class DetachedThreadTest : public ::testing::TestWithParam<LockingMode> {};

TEST_P(DetachedThreadTest, InlineEnterOfAFreeMonitorIsRefused) {
  // Lowered for either mode, on a runtime in the same mode: the inline enter
  // of a detached thread must not take the monitor (M1) of an inflated
  // object, since the lock-stack test (E2) comes first.
  const bool Heavy = GetParam() == LockingMode::Heavy;
  jitlock_test::MisuseLog Log;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = jitlock_test::MisuseLog::handler;
  Cfg.misuse_ctx = &Log;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT; // refusals, not aborts
  Cfg.locking_mode =
      Heavy ? JITLOCK_LOCKING_HEAVY : JITLOCK_LOCKING_LIGHTWEIGHT;
  ASSERT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
  jitlock_test::LoweredPair Code(GetParam());
  ASSERT_TRUE(Code.Lock && Code.Unlock);
  EXPECT_EQ(Code.Session->lockingMode(), GetParam());
  // Kept to the end of the process (a failed run may leave a monitor that
  // names it), where LeakSanitizer still finds it reachable.
  static std::deque<jitlock_test::Obj> Kept;
  jitlock_test::Obj *O = &Kept.emplace_back();
  // The code finds its thread through TLS, whatever the caller passes.
  jitlock_test::expectDetachedEnterRefused(O, Log, Code.enter(), Code.exit());
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
  jitlock_rt_default_config(&Cfg);
  EXPECT_EQ(jitlock_rt_configure(&Cfg), JITLOCK_OK);
}

INSTANTIATE_TEST_SUITE_P(Locking, DetachedThreadTest,
                         ::testing::Values(LockingMode::Lightweight,
                                           LockingMode::Heavy),
                         [](const auto &Info) {
                           return std::string(Info.param == LockingMode::Heavy
                                                  ? "Heavy"
                                                  : "Lightweight");
                         });

//===----------------------------------------------------------------------===//
// Refusals: an Error with the diagnostics, never a crash
//===----------------------------------------------------------------------===//

std::string refusal(Expected<std::unique_ptr<JitSession>> S) {
  if (S) {
    ADD_FAILURE() << "the module was accepted";
    return {};
  }
  return toString(S.takeError());
}

TEST(JitRefusalTest, OtherLayoutStampIsRefused) {
  std::string Msg = refusal(JitSession::loadFile(inputPath("other-layout.ll")));
  EXPECT_NE(Msg.find("another runtime layout"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("header=8"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, OwnLoweredOutputWithAlteredStampIsRefused) {
  std::string IR = loweredExample("counter");
  ASSERT_FALSE(IR.empty());
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  std::string Stamp = layoutFingerprint(L);
  // The module flag, at the end (the layout check's constant comes first).
  size_t At = IR.rfind(Stamp);
  ASSERT_NE(At, std::string::npos);
  L.lock_stack_end_offset += 8; // as if compiled for a 9-slot lock stack
  IR.replace(At, Stamp.size(), layoutFingerprint(L));
  std::string Msg = refusal(JitSession::loadBuffer(IR, "altered.ll"));
  EXPECT_NE(Msg.find("another runtime layout"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, PreLoweredForAnotherProcessesTlsOffsetIsRefused) {
  // The layout stamp does not cover the TLS offset; the thread stamp
  // (jitlock.lowered-thread) does, and the JIT checks it.
  std::string IR = loweredExample("counter");
  ASSERT_FALSE(IR.empty());
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  std::string Mine = "tls;tls-offset=" + std::to_string(L.thread_tls_offset);
  std::string Theirs =
      "tls;tls-offset=" + std::to_string(L.thread_tls_offset - 4096);
  size_t Replaced = 0;
  for (size_t At; (At = IR.find(Mine)) != std::string::npos; ++Replaced)
    IR.replace(At, Mine.size(), Theirs);
  ASSERT_GT(Replaced, 0u);
  std::string Msg = refusal(JitSession::loadBuffer(IR, "foreign-tls.ll"));
  EXPECT_NE(Msg.find("another process"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, MalformedModule) {
  std::string Msg = refusal(JitSession::loadFile(inputPath("malformed.ll")));
  EXPECT_NE(Msg.find("cannot be parsed"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("malformed.ll"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, GarbageBitcode) {
  std::string Bad = std::string("BC\xC0\xDE", 4) + "not really bitcode";
  std::string Msg = refusal(JitSession::loadBuffer(Bad, "garbage.bc"));
  EXPECT_NE(Msg.find("cannot be parsed"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, MissingFile) {
  std::string Msg = refusal(JitSession::loadFile(inputPath("no-such.ll")));
  EXPECT_NE(Msg.find("cannot be read"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, InvalidIR) {
  std::string Msg = refusal(JitSession::loadBuffer(R"(
    define i64 @f(i1 %c) {
    entry:
      br i1 %c, label %a, label %b
    a:
      %x = add i64 1, 2
      br label %b
    b:
      ret i64 %x
    }
  )",
                                                   "invalid.ll"));
  EXPECT_NE(Msg.find("not valid IR"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, UnbalancedExitFailsJitlockVerify) {
  std::string Msg = refusal(JitSession::loadFile(inputPath("unbalanced.ll")));
  EXPECT_NE(Msg.find("jitlock-verify"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("monitor exit without a matching enter"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("jitlock_example_run"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, WrongSignatureFailsJitlockVerify) {
  std::string Msg = refusal(JitSession::loadBuffer(R"(
    declare void @jitlock.monitor.enter(i64)
    define void @f() {
      call void @jitlock.monitor.enter(i64 42)
      ret void
    }
  )",
                                                   "signature.ll"));
  EXPECT_NE(Msg.find("wrong signature"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, UnknownJitlockNameFailsJitlockVerify) {
  std::string Msg = refusal(JitSession::loadBuffer(R"(
    declare void @jitlock.monitor.frobnicate(ptr)
    @o = global { i64 } { i64 1 }
    define void @f() {
      call void @jitlock.monitor.frobnicate(ptr @o)
      ret void
    }
  )",
                                                   "unknown.ll"));
  EXPECT_NE(Msg.find("unknown jitlock function"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, ConflictingConfigurationIsAnError) {
  // The module asks for a 16-slot lock stack; the runtime has another size.
  std::string Msg = refusal(JitSession::loadBuffer(R"(
    @o = global { i64 } { i64 1 }
    declare void @jitlock.monitor.enter(ptr)
    declare void @jitlock.monitor.exit(ptr)
    define void @f() {
      call void @jitlock.monitor.enter(ptr @o)
      call void @jitlock.monitor.exit(ptr @o)
      ret void
    }
    !llvm.module.flags = !{!0}
    !0 = !{i32 1, !"jitlock.capacity", i32 1000}
  )",
                                                   "capacity.ll"));
  EXPECT_NE(Msg.find("capacity"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, OtherArchitecture) {
  std::string Triple =
#if defined(__x86_64__)
      "aarch64-unknown-linux-gnu";
#else
      "x86_64-unknown-linux-gnu";
#endif
  std::string Msg = refusal(JitSession::loadBuffer(
      "target triple = \"" + Triple + "\"\ndefine void @f() { ret void }\n",
      "foreign.ll"));
  EXPECT_NE(Msg.find("this host is"), std::string::npos) << Msg;
}

TEST(JitRefusalTest, MissingEntryPoint) {
  expectRunRefused(JitSession::loadFile(inputPath("no-run.ll")),
                   "jitlock_example_run");
}

TEST(JitRefusalTest, WrongEntryPointType) {
  expectRunRefused(JitSession::loadBuffer(R"(
    define i64 @jitlock_example_run(i64 %tid, i64 %n) { ret i64 0 }
    define i32 @jitlock_example_check(i64 %n) { ret i32 0 }
  )",
                                          "types.ll"),
                   "expected i64 (i64)");
}

TEST(JitRefusalTest, IterationsWithoutTheGlobal) {
  ExampleOptions EO;
  EO.Iterations = 5;
  // Entry points that pass their checks, so that only the global is refused.
  // The needle is the runner's own refusal: without that check the missing
  // global would still fail, later, as a lookup error naming the symbol; and
  // a constant or narrower global would be written through.
  const char *Refusal = "--iterations needs the module to define a "
                        "non-constant global i64 @jitlock_example_iterations";
  const char *EntryPoints = R"(
    define i64 @jitlock_example_run(i64 %tid, i64 %n) { ret i64 0 }
    define i64 @jitlock_example_check(i64 %n) { ret i64 0 }
  )";
  struct Case {
    const char *Name, *Global;
  } Cases[] = {
      {"missing", ""},
      {"declared", "@jitlock_example_iterations = external global i64\n"},
      {"constant", "@jitlock_example_iterations = constant i64 0\n"},
      {"i32", "@jitlock_example_iterations = global i32 0\n"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Name);
    expectRunRefused(
        JitSession::loadBuffer(std::string(C.Global) + EntryPoints,
                               std::string("iterations-") + C.Name + ".ll"),
        Refusal, EO);
  }
}

TEST(JitRefusalTest, UndefinedSymbolIsALookupError) {
  expectRunRefused(JitSession::loadBuffer(R"(
    declare i64 @no_such_function_anywhere(i64)
    define i64 @jitlock_example_run(i64 %tid, i64 %n) {
      %r = call i64 @no_such_function_anywhere(i64 %tid)
      ret i64 %r
    }
    define i64 @jitlock_example_check(i64 %n) { ret i64 0 }
  )",
                                          "undefined.ll"),
                   "no_such_function_anywhere");
}

TEST(JitRefusalTest, LeakedLockIsAProblemNotACrash) {
  auto S = JitSession::loadFile(inputPath("leaked-lock.ll"));
  ASSERT_TRUE(!!S) << toString(S.takeError());
  auto R = runExample(**S, threads(2));
  ASSERT_TRUE(!!R) << toString(R.takeError());
  EXPECT_EQ(R->Check, 0);
  ASSERT_EQ(R->Problems.size(), 1u) << describe(*R);
  EXPECT_NE(R->Problems[0].find("JITLOCK_EHOLDING_LOCKS"), std::string::npos);
  // The thread exited attached; the runtime released its lock.
  auto Objects = (*S)->objects();
  ASSERT_TRUE(!!Objects) << toString(Objects.takeError());
  ASSERT_EQ(Objects->size(), 1u);
  expectAllReleased(snapshot(*Objects), "after the leaking thread exited");
  EXPECT_EQ(jitlock_rt_shutdown(), JITLOCK_OK);
}

} // namespace
