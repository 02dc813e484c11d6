//===- Runner.cpp - Running a module in one configuration -----------------===//
//
// The parent forks a child per run and reads its verdict from a pipe (one
// line per item: "kind K", "msg TEXT", "stat NAME VALUE"); the child's
// stderr goes to a second pipe, whose tail explains a crash. A child that
// neither reports nor ends within the time limit is killed: a hang.
//
// On the host the child lowers and JIT-compiles the module with
// jitlock::JitSession (in the JIT's own pipeline, or pre-lowered here with
// the configuration's optimization levels around the lowering, which the
// session accepts by its layout stamp), runs it with runExample, and then
// checks what the module cannot check itself: misuse reports, the final
// state of every lock object (unlocked, or inflated and unowned with nobody
// queued), the monitors alive against the objects inflated, and, after
// jitlock_rt_shutdown, every header restored and no monitor left.
//
// For AArch64 the child lowers the module here (thread=tls with the probe's
// offset, or thread=call), adds the constants the harness checks before it
// runs anything (test/AArch64/Harness/Lowered.h), compiles it with llc,
// links it statically with the cross-built example harness and runtime,
// and runs it under qemu: the lit tests' mechanism (test/AArch64/README.md).
//
//===----------------------------------------------------------------------===//
#include "Runner.h"

#include "ExampleRunner.h"
#include "PassSetup.h"
#include "jitlock/JIT.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;

namespace jitlock::fuzz {

//===----------------------------------------------------------------------===//
// Configuration names
//===----------------------------------------------------------------------===//

static const char *loweringName(Lowering L) {
  switch (L) {
  case Lowering::Inline:
    return "inline";
  case Lowering::Runtime:
    return "runtime";
  case Lowering::Heavy:
    return "heavy";
  case Lowering::HeavyRuntime:
    return "heavy-runtime";
  }
  return "?";
}

std::string RunConfig::name() const {
  std::string N;
  if (AArch64)
    N += std::string("arch=aarch64,lse=") + (Lse ? "1" : "0") + ",";
  N += std::string("lower=") + loweringName(Lower) +
       ",thread=" + threadModeName(Thread).str() + ",opt=";
  N += OptBefore < 0
           ? std::string("jit")
           : "O" + std::to_string(OptBefore) + "-O" + std::to_string(OptAfter);
  N += ",bang=" + bangModeName(Bang).str();
  if (!AArch64)
    N += ",sp=" + std::to_string(SafepointUs);
  N += ",threads=" + std::to_string(Threads);
  return N;
}

std::optional<RunConfig> RunConfig::parse(const std::string &Text,
                                          std::string &Problem) {
  RunConfig C;
  SmallVector<StringRef, 8> Items;
  StringRef(Text).split(Items, ',', -1, /*KeepEmpty=*/false);
  for (StringRef Item : Items) {
    auto [Key, Value] = Item.split('=');
    auto Bad = [&] {
      Problem = ("bad configuration item '" + Item + "'").str();
      return std::nullopt;
    };
    unsigned N = 0;
    if (Key == "arch") {
      if (Value != "aarch64" && Value != "host")
        return Bad();
      C.AArch64 = Value == "aarch64";
    } else if (Key == "lse") {
      if (Value != "0" && Value != "1")
        return Bad();
      C.Lse = Value == "1";
    } else if (Key == "lower") {
      if (Value == "inline")
        C.Lower = Lowering::Inline;
      else if (Value == "runtime")
        C.Lower = Lowering::Runtime;
      else if (Value == "heavy")
        C.Lower = Lowering::Heavy;
      else if (Value == "heavy-runtime")
        C.Lower = Lowering::HeavyRuntime;
      else
        return Bad();
    } else if (Key == "thread") {
      std::optional<ThreadMode> T = parseThreadMode(Value);
      if (!T)
        return Bad();
      C.Thread = *T;
    } else if (Key == "opt") {
      if (Value == "jit") {
        C.OptBefore = -1;
      } else {
        auto [Before, After] = Value.split('-');
        if (!Before.consume_front("O") || !After.consume_front("O") ||
            Before.getAsInteger(10, C.OptBefore) ||
            After.getAsInteger(10, C.OptAfter) || C.OptBefore < 0 ||
            C.OptBefore > 3 || C.OptAfter < 0 || C.OptAfter > 3)
          return Bad();
      }
    } else if (Key == "bang") {
      std::optional<BangMode> B = parseBangMode(Value);
      if (!B)
        return Bad();
      C.Bang = *B;
    } else if (Key == "sp") {
      if (Value.getAsInteger(10, N) || N > 1000000)
        return Bad();
      C.SafepointUs = N;
    } else if (Key == "threads") {
      if (Value.getAsInteger(10, N) || N < 1 || N > 64)
        return Bad();
      C.Threads = N;
    } else {
      return Bad();
    }
  }
  if (C.AArch64 && (C.Thread == ThreadMode::Arg || C.SafepointUs)) {
    Problem = "AArch64 runs take thread=tls or thread=call, and no sp";
    return std::nullopt;
  }
  if (C.Thread == ThreadMode::Arg && C.SafepointUs) {
    // polls=auto polls at run()'s return too, and run() has no thread
    // parameter.
    Problem = "thread=arg cannot run with sp (polls=auto)";
    return std::nullopt;
  }
  return C;
}

//===----------------------------------------------------------------------===//
// The child's side
//===----------------------------------------------------------------------===//

namespace {

/// What the child reports, written to the verdict pipe at the end.
class Report {
public:
  void fail(StringRef Kind, const Twine &Msg) {
    if (V.ok())
      V.Kind = Kind.str();
    if (V.Messages.size() < 20)
      V.Messages.push_back(Msg.str());
  }
  Verdict V;
};

std::atomic<unsigned> MisuseCount{0};

void onMisuse(void *, jitlock_status Status, jitlock_thread *, void *Obj,
              const char *What) {
  if (MisuseCount.fetch_add(1) < 5) {
    char Line[256];
    std::snprintf(Line, sizeof Line, "runtime misuse: %s: %s (object %p)\n",
                  jitlock_rt_status_name(Status), What, Obj);
    ssize_t Ignored = ::write(2, Line, std::strlen(Line));
    (void)Ignored;
  }
}

/// Collects the LLVM diagnostics of error severity instead of exiting.
class ErrorCollector : public DiagnosticHandler {
public:
  explicit ErrorCollector(std::vector<std::string> &Errors) : Errors(Errors) {}
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (DI.getSeverity() == DS_Error) {
      std::string Text;
      raw_string_ostream OS(Text);
      DiagnosticPrinterRawOStream DP(OS);
      DI.print(DP);
      Errors.push_back(Text);
    }
    return true;
  }

private:
  std::vector<std::string> &Errors;
};

OptimizationLevel level(int N) {
  switch (N) {
  case 0:
    return OptimizationLevel::O0;
  case 1:
    return OptimizationLevel::O1;
  case 3:
    return OptimizationLevel::O3;
  default:
    return OptimizationLevel::O2;
  }
}

/// Runs one pipeline on `M`: `Lower` set adds the lowering (at the start of
/// `Level`'s pipeline when `AtStart`, else before it).
void runPipeline(Module &M, TargetMachine *TM, int Level,
                 const LoweringConfig *Lower, bool AtStart) {
  PassBuilder PB(TM);
  if (Lower && AtStart)
    registerPasses(PB, *Lower);
  jitlock::tools::AnalysisManagers AM(PB);
  ModulePassManager MPM;
  if (Lower && !AtStart)
    addLoweringPasses(MPM, *Lower);
  if (Level == 0)
    MPM.addPass(PB.buildO0DefaultPipeline(OptimizationLevel::O0));
  else
    MPM.addPass(PB.buildPerModuleDefaultPipeline(level(Level)));
  MPM.run(M, AM.MAM);
}

/// The module lowered as `C` says, as text; errors in `Errors`.
std::optional<std::string> lowerHere(const std::string &IR, const RunConfig &C,
                                     const LoweringConfig &LC,
                                     TargetMachine *TM,
                                     std::vector<std::string> &Errors) {
  LLVMContext Ctx;
  Ctx.setDiagnosticHandler(std::make_unique<ErrorCollector>(Errors));
  SMDiagnostic Err;
  std::unique_ptr<Module> M = parseAssemblyString(IR, Err, Ctx);
  if (!M) {
    std::string Text;
    raw_string_ostream OS(Text);
    Err.print("module", OS, false);
    Errors.push_back(Text);
    return std::nullopt;
  }
  if (TM) {
    M->setTargetTriple(TM->getTargetTriple().str());
    M->setDataLayout(TM->createDataLayout());
  }
  if (C.OptBefore < 0) {
    runPipeline(*M, TM, 2, &LC, /*AtStart=*/true);
  } else {
    runPipeline(*M, TM, C.OptBefore, nullptr, false);
    if (Errors.empty())
      runPipeline(*M, TM, C.OptAfter, &LC, /*AtStart=*/false);
  }
  if (!Errors.empty())
    return std::nullopt;
  std::string Out;
  raw_string_ostream OS(Out);
  M->print(OS, nullptr);
  return Out;
}

LoweringConfig loweringConfig(const RunConfig &C) {
  LoweringConfig LC;
  LC.Thread = C.Thread;
  LC.Inline = C.Lower != Lowering::Runtime;
  LC.Locking = C.Lower == Lowering::Heavy ? LockingMode::Heavy
                                          : LockingMode::Lightweight;
  LC.Bang = C.Bang;
  LC.Polls = C.SafepointUs ? PollMode::Auto : PollMode::Explicit;
  return LC;
}

/// What `check` found, counter by counter, when the module is a
/// jitlock-fuzz program (replayed modules may have other globals).
void explainCheck(JitSession &S, unsigned Threads, Report &Out) {
  const GlobalVariable *Objects = S.module().getNamedGlobal("objects");
  auto Have = S.lookup("objects"), Want = S.lookup("expect_counters"),
       Sums = S.lookup("thread_sums"), SumsWant = S.lookup("expect_sums");
  if (!Objects || !Have || !Want || !Sums || !SumsWant) {
    consumeError(Have.takeError());
    consumeError(Want.takeError());
    consumeError(Sums.takeError());
    consumeError(SumsWant.takeError());
    return;
  }
  auto *AT = dyn_cast<ArrayType>(Objects->getValueType());
  auto *ST = AT ? dyn_cast<StructType>(AT->getElementType()) : nullptr;
  auto *FT = ST && ST->getNumElements() == 2
                 ? dyn_cast<ArrayType>(ST->getElementType(1))
                 : nullptr;
  if (!FT || Threads > 8)
    return;
  unsigned NObj = unsigned(AT->getNumElements());
  unsigned NField = unsigned(FT->getNumElements());
  unsigned Counters = NObj * NField;
  auto *Obj = static_cast<const uint64_t *>(*Have);
  auto *Exp = static_cast<const uint64_t *>(*Want);
  unsigned Shown = 0;
  for (unsigned O = 0; O != NObj; ++O)
    for (unsigned F = 0; F != NField; ++F) {
      uint64_t Expected = 0;
      for (unsigned T = 0; T != Threads; ++T)
        Expected += Exp[T * Counters + O * NField + F];
      uint64_t Actual = Obj[O * (NField + 1) + 1 + F];
      if (Actual != Expected && Shown++ < 4)
        Out.fail("wrong-result", "objects[" + Twine(O) + "] counter " +
                                     Twine(F) + " is " + Twine(Actual) +
                                     ", the model says " + Twine(Expected));
    }
  auto *Sum = static_cast<const uint64_t *>(*Sums);
  auto *SumExp = static_cast<const uint64_t *>(*SumsWant);
  for (unsigned T = 0; T != Threads; ++T)
    if (Sum[T] != SumExp[T] && Shown++ < 6)
      Out.fail("wrong-result", "thread " + Twine(T) + "'s checksum is " +
                                   Twine(Sum[T]) + ", the model says " +
                                   Twine(SumExp[T]));
}

/// After the run: every object unlocked, or inflated and idle.
void checkLockState(const std::vector<ModuleObject> &Objects, Report &Out) {
  unsigned Inflated = 0;
  for (const ModuleObject &O : Objects) {
    jitlock_lock_info Info{};
    if (int Rc = jitlock_rt_inspect(O.Addr, &Info)) {
      Out.fail("held-lock", O.Name + ": jitlock_rt_inspect failed with " +
                                jitlock_rt_status_name(Rc));
      continue;
    }
    if (Info.state == JITLOCK_STATE_FAST)
      Out.fail("held-lock", O.Name + " is still fast-locked after the run");
    else if (Info.state == JITLOCK_STATE_EMBEDDER)
      Out.fail("held-lock", O.Name + "'s header has the embedder's bits 11");
    if (Info.state == JITLOCK_STATE_INFLATED) {
      ++Inflated;
      if (Info.owner || Info.anonymous_owner || Info.holds)
        Out.fail("held-lock", O.Name + "'s monitor is still owned (" +
                                  Twine(Info.holds) + " holds)");
      if (Info.entry_queued || Info.waiting)
        Out.fail("held-lock", O.Name + "'s monitor still has " +
                                  Twine(Info.entry_queued) + " queued and " +
                                  Twine(Info.waiting) + " waiting threads");
    }
  }
  jitlock_rt_stats Stats;
  jitlock_rt_get_stats(&Stats);
  if (Stats.monitors_alive > Inflated)
    Out.fail("monitor-leak", Twine(Stats.monitors_alive) +
                                 " monitors alive after the run, but only " +
                                 Twine(Inflated) + " objects are inflated");
}

void checkShutdown(const std::vector<ModuleObject> &Objects, Report &Out) {
  if (int Rc = jitlock_rt_shutdown()) {
    Out.fail("problem", Twine("jitlock_rt_shutdown failed with ") +
                            jitlock_rt_status_name(Rc));
    return;
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  for (const ModuleObject &O : Objects) {
    uint64_t Header;
    std::memcpy(&Header, static_cast<char *>(O.Addr) + L.header_offset,
                sizeof Header);
    if ((Header & L.lock_mask) != L.unlocked_value)
      Out.fail("held-lock", O.Name + "'s header is " +
                                Twine::utohexstr(Header) +
                                " after jitlock_rt_shutdown, not unlocked");
  }
  jitlock_rt_stats Stats;
  jitlock_rt_get_stats(&Stats);
  if (Stats.monitors_alive)
    Out.fail("monitor-leak", Twine(Stats.monitors_alive) +
                                 " monitors alive after jitlock_rt_shutdown");
}

Verdict hostRun(const std::string &IR, const RunConfig &C) {
  Report Out;
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  Cfg.misuse_handler = onMisuse;
  Cfg.compiled_code_misuse = JITLOCK_MISUSE_REPORT;
  if (C.Lower == Lowering::Heavy || C.Lower == Lowering::HeavyRuntime)
    Cfg.locking_mode = JITLOCK_LOCKING_HEAVY;
  if (int Rc = jitlock_rt_configure(&Cfg)) {
    Out.fail("problem", Twine("jitlock_rt_configure failed with ") +
                            jitlock_rt_status_name(Rc));
    return Out.V;
  }

  JitOptions JO;
  std::string Module = IR;
  if (C.OptBefore < 0) {
    JO.Inline = C.Lower != Lowering::Runtime;
    JO.Locking = C.Lower == Lowering::Heavy ? LockingMode::Heavy
                                            : LockingMode::Lightweight;
    JO.Bang = C.Bang;
    if (C.SafepointUs)
      JO.Polls = PollMode::Auto;
    if (C.Thread != ThreadMode::TLS)
      Module += std::string("\n!llvm.module.flags = !{!0}\n!0 = !{i32 1, "
                            "!\"jitlock.thread\", !\"") +
                threadModeName(C.Thread).str() + "\"}\n";
  } else {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    auto JTMB = orc::JITTargetMachineBuilder::detectHost();
    if (!JTMB) {
      Out.fail("problem", toString(JTMB.takeError()));
      return Out.V;
    }
    auto TM = JTMB->createTargetMachine();
    if (!TM) {
      Out.fail("problem", toString(TM.takeError()));
      return Out.V;
    }
    LoweringConfig LC = loweringConfig(C);
    if (C.Thread == ThreadMode::TLS)
      LC.TlsOffset = LoweringConfig::forThisProcess().TlsOffset;
    std::vector<std::string> Errors;
    std::optional<std::string> Lowered =
        lowerHere(IR, C, LC, TM->get(), Errors);
    if (!Lowered) {
      for (const std::string &E : Errors)
        Out.fail("refused", "lowering: " + E);
      return Out.V;
    }
    Module = std::move(*Lowered);
  }

  auto S = JitSession::loadBuffer(Module, "program", JO);
  if (!S) {
    Out.fail("refused", toString(S.takeError()));
    return Out.V;
  }
  ExampleOptions EO;
  EO.Threads = C.Threads;
  if (C.SafepointUs)
    EO.SafepointEvery = C.SafepointUs;
  auto Ran = runExample(**S, EO);
  if (!Ran) {
    Out.fail("refused", toString(Ran.takeError()));
    return Out.V;
  }
  const ExampleResult &R = *Ran;
  Out.V.Contended = R.Stats.contended_enters;
  Out.V.Inflations = R.Stats.inflations;
  Out.V.Parks = R.Stats.parks;
  Out.V.Waits = R.Stats.waits;
  Out.V.Notifies = R.Stats.notifies;
  Out.V.SlowCalls = R.Stats.slow_path_calls;
  Out.V.Seconds = R.Seconds;
  if (R.Safepoints) {
    Out.V.Safepoints = R.Safepoints->safepoints();
    Out.V.Handshakes = R.Safepoints->handshakes();
    Out.V.Deflated = R.Safepoints->Deflated;
  }
  for (const StackOverflowReport &O : R.Overflows)
    Out.fail("stack-overflow", "stack overflow in " + O.Phase + "()");
  // A thread that returned holding a lock is the cause; the misuse reports
  // of its refused detach are the consequence.
  for (const std::string &P : R.Problems)
    Out.fail(StringRef(P).contains("holding a lock") ? "held-lock" : "problem",
             P);
  if (unsigned N = MisuseCount.load())
    Out.fail("misuse",
             "the runtime reported " + Twine(N) + " misuse(s) (see stderr)");
  if (R.Check != 0) {
    Out.fail("wrong-result", "jitlock_example_check returned " +
                                 Twine(R.Check) +
                                 " (1 counters, 2 checksums, 4 runtime call "
                                 "errors, 8 too many threads)");
    explainCheck(**S, C.Threads, Out);
  }
  auto Objects = (*S)->objects();
  if (!Objects) {
    Out.fail("problem", toString(Objects.takeError()));
    return Out.V;
  }
  checkLockState(*Objects, Out);
  // A thread that could not detach keeps the runtime from shutting down:
  // that was reported already.
  if (R.Problems.empty())
    checkShutdown(*Objects, Out);
  return Out.V;
}

/// Runs `Args` with output to `Output`; the exit code, -1 on failure.
int runTool(ArrayRef<std::string> Args, StringRef Output, unsigned Timeout,
            std::string &Problem) {
  std::vector<StringRef> Argv(Args.begin(), Args.end());
  std::optional<StringRef> Redirects[] = {StringRef(""), Output, Output};
  return sys::ExecuteAndWait(Args[0], Argv, std::nullopt, Redirects, Timeout, 0,
                             &Problem);
}

std::string tail(StringRef Path, size_t Bytes) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return "";
  StringRef Text = (*Buf)->getBuffer();
  return Text.take_back(Bytes).str();
}

/// The constants a harness compares with its runtime before it runs
/// anything, from the flags the lowering stamped.
std::optional<std::string> harnessStamps(StringRef Lowered) {
  auto Flag = [&](StringRef Name) -> std::optional<std::string> {
    std::string Key = ("!\"" + Name + "\", !\"").str();
    size_t At = Lowered.find(Key);
    if (At == StringRef::npos)
      return std::nullopt;
    StringRef Rest = Lowered.substr(At + Key.size());
    return Rest.take_until([](char C) { return C == '"'; }).str();
  };
  std::optional<std::string> Layout = Flag(LoweredLayoutFlag);
  std::optional<std::string> Thread = Flag(LoweredThreadFlag);
  if (!Layout || !Thread)
    return std::nullopt;
  auto [Mode, Rest] = StringRef(*Thread).split(';');
  int64_t Offset = 0;
  if (Mode == "tls" &&
      (!Rest.consume_front("tls-offset=") || Rest.getAsInteger(10, Offset)))
    return std::nullopt;
  auto Str = [](StringRef Name, StringRef Value) {
    return ("@" + Name + " = constant [" + Twine(Value.size() + 1) +
            " x i8] c\"" + Value + "\\00\"\n")
        .str();
  };
  return "\n" + Str("jitlock_lowered_layout", *Layout) +
         Str("jitlock_lowered_thread", Mode) +
         "@jitlock_lowered_tls_offset = constant i64 " +
         std::to_string(Offset) + "\n";
}

Verdict aarch64Run(const std::string &IR, const RunConfig &C,
                   const AArch64Tools &Tools, unsigned Timeout) {
  Report Out;
  LoweringConfig LC = loweringConfig(C);
  if (C.Thread == ThreadMode::TLS)
    LC.TlsOffset = Tools.TlsOffset;
  std::vector<std::string> Errors;
  std::optional<std::string> Lowered = lowerHere(IR, C, LC, nullptr, Errors);
  if (!Lowered) {
    for (const std::string &E : Errors)
      Out.fail("refused", "lowering: " + E);
    return Out.V;
  }
  std::optional<std::string> Stamps = harnessStamps(*Lowered);
  if (!Stamps) {
    Out.fail("refused", "the lowered module has no layout or thread stamp");
    return Out.V;
  }
  SmallString<128> Dir;
  if (std::error_code EC =
          sys::fs::createUniqueDirectory("jitlock-fuzz-a64", Dir)) {
    Out.fail("problem", "cannot create a temporary directory: " + EC.message());
    return Out.V;
  }
  auto Path = [&](StringRef Name) {
    SmallString<128> P(Dir);
    sys::path::append(P, Name);
    return std::string(P);
  };
  std::string Ll = Path("program.ll"), Obj = Path("program.o"),
              Exe = Path("program"), Log = Path("log.txt");
  {
    std::error_code EC;
    raw_fd_ostream OS(Ll, EC);
    OS << *Lowered << *Stamps;
  }
  std::string Problem;
  auto Step = [&](StringRef What, ArrayRef<std::string> Args) {
    int Rc = runTool(Args, Log, Timeout, Problem);
    if (Rc == 0)
      return true;
    Out.fail("aarch64",
             What + " failed (" +
                 (Problem.empty() ? "exit " + Twine(Rc) : Twine(Problem)) +
                 "): " + tail(Log, 600));
    return false;
  };
  std::string Lib = Tools.Dir + "/libjitlock_";
  bool Ok =
      Step("llc", {Tools.Llc, "-mtriple=aarch64-linux-gnu", "-O2",
                   C.Lse ? "-mattr=+lse" : "-mattr=-lse", "-filetype=obj", Ll,
                   "-o", Obj}) &&
      Step("linking", {Tools.Cxx, "-static", "-pthread", "-o", Exe, Obj,
                       "-Wl,--whole-archive", Lib + "aarch64_harness.a",
                       Lib + "rt_aarch64.a", "-Wl,--no-whole-archive",
                       "-Wl,--require-defined=jitlock_example_run",
                       "-Wl,--require-defined=jitlock_lowered_layout"}) &&
      Step("running under qemu", {Tools.Qemu, "-cpu", "max", Exe, "--threads",
                                  std::to_string(C.Threads)});
  std::string Output = tail(Log, 4096);
  if (Ok && Output.find("harness: PASS") == std::string::npos)
    Out.fail("aarch64", "the harness did not pass: " + tail(Log, 600));
  // The harness prints the runtime's counters as "name N" pairs.
  auto Counter = [&](StringRef Name) -> uint64_t {
    size_t At = Output.find((" " + Name + " ").str());
    uint64_t N = 0;
    if (At != std::string::npos)
      StringRef(Output)
          .substr(At + Name.size() + 2)
          .take_while(isDigit)
          .getAsInteger(10, N);
    return N;
  };
  Out.V.Contended = Counter("contended_enters");
  Out.V.Inflations = Counter("inflations");
  Out.V.Parks = Counter("parks");
  Out.V.SlowCalls = Counter("slow_path_calls");
  if (Out.V.ok())
    sys::fs::remove_directories(Dir);
  else
    Out.V.Messages.push_back(("files kept in " + Dir).str());
  return Out.V;
}

void writeVerdict(int Fd, const Verdict &V) {
  std::string Text = "kind " + V.Kind + "\n";
  for (const std::string &M : V.Messages) {
    std::string Line = M;
    std::replace(Line.begin(), Line.end(), '\n', ' ');
    Text += "msg " + Line + "\n";
  }
  auto Stat = [&](const char *Name, uint64_t Value) {
    Text += std::string("stat ") + Name + " " + std::to_string(Value) + "\n";
  };
  Stat("contended", V.Contended);
  Stat("inflations", V.Inflations);
  Stat("parks", V.Parks);
  Stat("waits", V.Waits);
  Stat("notifies", V.Notifies);
  Stat("slowcalls", V.SlowCalls);
  Stat("safepoints", V.Safepoints);
  Stat("handshakes", V.Handshakes);
  Stat("deflated", V.Deflated);
  Stat("micros", uint64_t(V.Seconds * 1e6));
  for (size_t Done = 0; Done < Text.size();) {
    ssize_t N = ::write(Fd, Text.data() + Done, Text.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return;
    Done += size_t(N);
  }
}

Verdict parseVerdict(StringRef Text) {
  Verdict V;
  V.Kind = "";
  SmallVector<StringRef, 16> Lines;
  Text.split(Lines, '\n', -1, false);
  for (StringRef Line : Lines) {
    auto [Key, Rest] = Line.split(' ');
    if (Key == "kind") {
      V.Kind = Rest.str();
    } else if (Key == "msg") {
      V.Messages.push_back(Rest.str());
    } else if (Key == "stat") {
      auto [Name, Value] = Rest.split(' ');
      uint64_t N = 0;
      Value.getAsInteger(10, N);
      if (Name == "contended")
        V.Contended = N;
      else if (Name == "inflations")
        V.Inflations = N;
      else if (Name == "parks")
        V.Parks = N;
      else if (Name == "waits")
        V.Waits = N;
      else if (Name == "notifies")
        V.Notifies = N;
      else if (Name == "slowcalls")
        V.SlowCalls = N;
      else if (Name == "safepoints")
        V.Safepoints = N;
      else if (Name == "handshakes")
        V.Handshakes = N;
      else if (Name == "deflated")
        V.Deflated = N;
      else if (Name == "micros")
        V.Seconds = double(N) / 1e6;
    }
  }
  return V;
}

} // namespace

bool probeAArch64(AArch64Tools &Tools, std::string &Problem) {
  SmallString<128> Out;
  if (std::error_code EC =
          sys::fs::createTemporaryFile("jitlock-fuzz-probe", "txt", Out)) {
    Problem = "cannot create a temporary file: " + EC.message();
    return false;
  }
  std::string Probe = Tools.Dir + "/jitlock-aarch64-probe";
  std::vector<StringRef> Argv = {Tools.Qemu, "-cpu", "max", Probe,
                                 "--print-tls-offset"};
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(Out),
                                          StringRef("")};
  int Rc = sys::ExecuteAndWait(Tools.Qemu, Argv, std::nullopt, Redirects, 60, 0,
                               &Problem);
  std::string Text = tail(Out, 64);
  sys::fs::remove(Out);
  if (Rc != 0 || StringRef(Text).trim().getAsInteger(10, Tools.TlsOffset)) {
    if (Problem.empty())
      Problem = "'" + Probe + " --print-tls-offset' under qemu failed";
    return false;
  }
  Tools.Ready = true;
  return true;
}

Verdict runModule(const std::string &IR, const RunConfig &C,
                  const AArch64Tools &Tools, unsigned TimeoutSeconds) {
  int VerdictPipe[2], ErrPipe[2];
  if (::pipe(VerdictPipe) || ::pipe(ErrPipe)) {
    Verdict V;
    V.Kind = "problem";
    V.Messages.push_back(std::string("pipe: ") + std::strerror(errno));
    return V;
  }
  // What the child writes must not sit in the parent's buffers twice.
  outs().flush();
  errs().flush();
  std::fflush(nullptr);
  pid_t Child = ::fork();
  if (Child == 0) {
    ::close(VerdictPipe[0]);
    ::close(ErrPipe[0]);
    ::dup2(ErrPipe[1], 2);
    int Null = ::open("/dev/null", O_WRONLY);
    if (Null >= 0)
      ::dup2(Null, 1);
    Verdict V =
        C.AArch64 ? aarch64Run(IR, C, Tools, TimeoutSeconds) : hostRun(IR, C);
    writeVerdict(VerdictPipe[1], V);
    ::_exit(0);
  }
  ::close(VerdictPipe[1]);
  ::close(ErrPipe[1]);
  Verdict Failed;
  if (Child < 0) {
    ::close(VerdictPipe[0]);
    ::close(ErrPipe[0]);
    Failed.Kind = "problem";
    Failed.Messages.push_back(std::string("fork: ") + std::strerror(errno));
    return Failed;
  }

  std::string Text, Err;
  bool TimedOut = false;
  auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(TimeoutSeconds);
  pollfd Fds[2] = {{VerdictPipe[0], POLLIN, 0}, {ErrPipe[0], POLLIN, 0}};
  unsigned Open = 2;
  while (Open) {
    auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    Deadline - std::chrono::steady_clock::now())
                    .count();
    if (Left <= 0) {
      TimedOut = true;
      break;
    }
    int N = ::poll(Fds, 2, int(std::min<int64_t>(Left, 1000)));
    if (N < 0 && errno != EINTR)
      break;
    for (int I = 0; I != 2; ++I) {
      if (Fds[I].fd < 0 || !(Fds[I].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char Buf[4096];
      ssize_t Got = ::read(Fds[I].fd, Buf, sizeof Buf);
      if (Got > 0) {
        (I == 0 ? Text : Err).append(Buf, size_t(Got));
        if (Err.size() > 64 * 1024)
          Err.erase(0, Err.size() - 16 * 1024);
      } else if (Got == 0 || errno != EINTR) {
        ::close(Fds[I].fd);
        Fds[I].fd = -1;
        --Open;
      }
    }
  }
  if (TimedOut)
    ::kill(Child, SIGKILL);
  for (pollfd &F : Fds)
    if (F.fd >= 0)
      ::close(F.fd);
  int Status = 0;
  while (::waitpid(Child, &Status, 0) < 0 && errno == EINTR) {
  }

  auto StderrTail = [&] {
    std::string T = StringRef(Err).take_back(1500).str();
    std::replace(T.begin(), T.end(), '\n', ' ');
    return T;
  };
  if (TimedOut) {
    Failed.Kind = "timeout";
    Failed.Messages.push_back("no verdict in " +
                              std::to_string(TimeoutSeconds) +
                              " s: killed (a hang or a deadlock)");
    if (!Err.empty())
      Failed.Messages.push_back("stderr: " + StderrTail());
    return Failed;
  }
  Verdict V = parseVerdict(Text);
  if (V.Kind.empty()) {
    Failed.Kind = "crash";
    if (WIFSIGNALED(Status))
      Failed.Messages.push_back("killed by signal " +
                                std::to_string(WTERMSIG(Status)) + " (" +
                                strsignal(WTERMSIG(Status)) + ")");
    else
      Failed.Messages.push_back("exited with status " +
                                std::to_string(WEXITSTATUS(Status)) +
                                " without a verdict");
    if (!Err.empty())
      Failed.Messages.push_back("stderr: " + StderrTail());
    return Failed;
  }
  if (!V.ok() && !Err.empty())
    V.Messages.push_back("stderr: " + StderrTail());
  return V;
}

} // namespace jitlock::fuzz
