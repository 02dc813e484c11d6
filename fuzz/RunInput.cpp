//===- RunInput.cpp - One fuzz input through the jitlock passes -----------===//
//
// The contract under test: on any module that the LLVM verifier accepts,
// every jitlock pipeline either reports an error diagnostic through the
// module's LLVMContext, or leaves a module that the verifier accepts; and the
// full lowering leaves no jitlock.* call and no "jitlock-stack-bang"
// attribute behind. A crash, a sanitizer report or a broken contract aborts
// (libFuzzer then saves the input).
//
// As in a JIT (JitSession), jitlock-verify runs alone first, and a module it
// refuses goes no further. A later error stops LLVM's own passes (they are
// skipped once one was reported); jitlock's passes, which are required, still
// run and must cope.
//
//===----------------------------------------------------------------------===//
#include "PassFuzzer.h"

#include "jitlock/Passes.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstdlib>
#include <iterator>
#include <string>

using namespace llvm;
using namespace jitlock;
using namespace jitlock::fuzz;

namespace {

/// The pipelines an input can pick.
enum class Pipeline {
  /// `jitlock-lower<params>` pipeline text.
  Lower,
  /// The default O2 pipeline of a PassBuilder with registerPasses.
  DefaultO2,
  /// Some of the six passes alone, in pipeline text.
  Separate,
  /// The default O1 or O3 pipeline.
  DefaultOther,
};

/// What the option bytes say.
struct Options {
  Pipeline Kind;
  bool Generated;
  /// registerPasses gets LoweringConfig::forThisProcess() as its base
  /// instead of an empty configuration.
  bool ProcessBase;
  /// Run the pipeline a second time on its own output.
  bool Twice;
  /// Give the PassBuilder a target machine for the host (as a JIT does).
  bool HostMachine;
  /// Which of the six passes `Separate` runs (bit 0 jitlock-verify ...
  /// bit 4 jitlock-lower-thread, bit 5 jitlock-place-polls); 0 runs all six
  /// in reverse order. Bit 0 also picks O3 over O1 for `DefaultOther`.
  unsigned PassMask;
  /// The parameters, "thread=call;inline;..." (maybe bad ones).
  std::string Params;
};

Options decodeOptions(const uint8_t *B) {
  Options O;
  O.Kind = Pipeline(B[0] & 3);
  O.ProcessBase = B[0] & 4;
  O.Twice = B[0] & 8;
  O.HostMachine = B[0] & 16;
  O.Generated = B[0] & GeneratedBit;
  O.PassMask = B[4] >> 1 & 63;
  // Bad parameter values only when asked for, so that most inputs get as
  // far as the lowerings.
  bool Bad = B[4] & 1;
  auto Value = [Bad](const char *V, bool IsBad) {
    return IsBad && !Bad ? nullptr : V;
  };

  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  std::string Runtime = std::to_string(L.thread_tls_offset);
  static const char *const TlsOffsets[] = {
      nullptr, "-320", "0", "8", "-2147483648", "2147483648", "x", nullptr};
  unsigned TlsChoice = B[3] >> 2 & 7;
  const char *Tls = Value(TlsOffsets[TlsChoice], TlsChoice >= 5);
  std::string TlsOffset = Tls ? Tls : Runtime;

  SmallVector<std::string, 8> P;
  switch (B[1] & 7) {
  case 1:
    P.push_back("thread=tls");
    break;
  case 2:
    P.push_back("thread=tls");
    P.push_back("tls-offset=" + TlsOffset);
    break;
  case 3:
    P.push_back("thread=arg");
    break;
  case 4:
    P.push_back("thread=call");
    break;
  case 5:
    if (Bad)
      P.push_back("thread=fast");
    break;
  }
  static const char *const Inline[] = {nullptr, "inline", "no-inline",
                                       "inline=1"};
  if (const char *S = Value(Inline[B[1] >> 3 & 3], (B[1] >> 3 & 3) == 3))
    P.push_back(S);
  static const char *const Locking[] = {nullptr, "locking=lightweight",
                                        "locking=heavy", "locking=none"};
  if (const char *S = Value(Locking[B[1] >> 5 & 3], (B[1] >> 5 & 3) == 3))
    P.push_back(S);
  if (B[1] & 0x80) {
    static const char *const Capacities[] = {nullptr, "0", "4", "4294967296"};
    const char *S = Value(Capacities[B[3] & 3], true);
    P.push_back("capacity=" +
                (S ? std::string(S) : std::to_string(L.lock_stack_capacity)));
  }
  static const char *const Polls[] = {nullptr, "polls=none", "polls=explicit",
                                      "polls=auto"};
  if (const char *S = Polls[B[2] & 3])
    P.push_back(S);
  static const char *const Bangs[] = {nullptr, "bang=watermark", "bang=always",
                                      "bang=none"};
  if (const char *S = Bangs[B[2] >> 2 & 3])
    P.push_back(S);
  static const char *const HeaderOffsets[] = {nullptr, "0", "8",          "-8",
                                              "16",    "3", "2147483648", "x"};
  unsigned HeaderChoice = B[2] >> 4 & 7;
  if (const char *S = Value(HeaderOffsets[HeaderChoice], HeaderChoice >= 5))
    P.push_back(std::string("header-offset=") + S);
  if (B[2] & 0x80)
    P.push_back("tls-offset=" + TlsOffset);
  if (Bad && (B[3] & 0xE0) == 0xE0)
    P.push_back("unknown");
  O.Params = join(P, ";");
  return O;
}

/// Records whether an error was reported, and keeps the first for the
/// replay driver's summary.
struct ErrorRecorder : DiagnosticHandler {
  bool HadError = false;
  std::string First;
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (DI.getSeverity() != DS_Error)
      return true;
    if (!HadError) {
      raw_string_ostream OS(First);
      DiagnosticPrinterRawOStream DP(OS);
      DI.print(DP);
    }
    HadError = true;
    return true;
  }
};

[[noreturn]] void finding(const Twine &What, const Options &O, Module &M) {
  errs() << "jitlock-pass-fuzz: FINDING: " << What << "\n"
         << "  pipeline kind " << unsigned(O.Kind) << ", parameters '"
         << O.Params << "', pass mask " << O.PassMask
         << (O.ProcessBase ? ", process base" : "")
         << (O.Twice ? ", twice" : "")
         << (O.HostMachine ? ", host machine" : "") << "\n"
         << "  the module after the passes:\n";
  M.print(errs(), nullptr);
  errs().flush();
  std::abort();
}

TargetMachine *hostMachine() {
  static TargetMachine *TM = [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    std::string Triple = sys::getProcessTriple(), Err;
    const Target *T = TargetRegistry::lookupTarget(Triple, Err);
    return T ? T->createTargetMachine(Triple, "", "", TargetOptions(),
                                      std::nullopt)
             : nullptr;
  }();
  return TM;
}

/// The pipeline text of `Separate`.
std::string separatePipeline(const Options &O) {
  // In pipeline order, each with its bit of the mask (jitlock-place-polls
  // came last, so that the older inputs keep their pipelines).
  static const std::pair<const char *, unsigned> Passes[] = {
      {"jitlock-verify", 0},           {"jitlock-lower-stack-bang", 1},
      {"jitlock-lower-monitors", 2},   {"jitlock-place-polls", 5},
      {"jitlock-lower-safepoints", 3}, {"jitlock-lower-thread", 4}};
  constexpr unsigned NumPasses = std::size(Passes);
  auto WithParams = [&](unsigned I) {
    std::string Name = Passes[I].first;
    return I == 0 || O.Params.empty() ? Name : Name + "<" + O.Params + ">";
  };
  SmallVector<std::string, NumPasses> Chosen;
  for (unsigned I = 0; I < NumPasses; ++I)
    if (O.PassMask == 0)
      Chosen.push_back(WithParams(NumPasses - 1 - I));
    else if (O.PassMask >> Passes[I].second & 1)
      Chosen.push_back(WithParams(I));
  return join(Chosen, ",");
}

/// Runs the pipeline of `O` on `M`; the diagnostics go to `Errors`.
void runPipeline(Module &M, const Options &O, ErrorRecorder &Errors) {
  PassInstrumentationCallbacks PIC;
  // Once an error was reported the module is refused: LLVM's passes need not
  // see it (jitlock's are required and run regardless).
  PIC.registerShouldRunOptionalPassCallback(
      [&Errors](StringRef, Any) { return !Errors.HadError; });
  TargetMachine *TM = O.HostMachine ? hostMachine() : nullptr;
  PassBuilder PB(TM, PipelineTuningOptions(), std::nullopt, &PIC);

  LoweringConfig Base;
  if (O.ProcessBase)
    Base = LoweringConfig::forThisProcess();
  bool Default =
      O.Kind == Pipeline::DefaultO2 || O.Kind == Pipeline::DefaultOther;
  if (Default) {
    // The default pipelines take the configuration as a struct.
    Expected<LoweringConfig> Parsed = LoweringConfig::parse(O.Params);
    if (!Parsed)
      finding("runInput passed unparsable parameters: " +
                  toString(Parsed.takeError()),
              O, M);
    if (Parsed->Thread)
      Base.Thread = Parsed->Thread;
    if (Parsed->TlsOffset)
      Base.TlsOffset = Parsed->TlsOffset;
    Base.HeaderOffset = Parsed->HeaderOffset;
    Base.Capacity = Parsed->Capacity;
    Base.Inline = Parsed->Inline;
    Base.Bang = Parsed->Bang;
    Base.Locking = Parsed->Locking;
    Base.Polls = Parsed->Polls;
  }
  registerPasses(PB, Base);

  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  ModulePassManager MPM;
  if (Default) {
    OptimizationLevel Level = O.Kind == Pipeline::DefaultO2
                                  ? OptimizationLevel::O2
                              : O.PassMask & 1 ? OptimizationLevel::O3
                                               : OptimizationLevel::O1;
    MPM = PB.buildPerModuleDefaultPipeline(Level);
  } else {
    std::string Text =
        O.Kind == Pipeline::Lower
            ? (O.Params.empty() ? "jitlock-lower"
                                : "jitlock-lower<" + O.Params + ">")
            : separatePipeline(O);
    if (Error E = PB.parsePassPipeline(MPM, Text))
      finding("the pipeline '" + Text +
                  "' does not parse: " + toString(std::move(E)),
              O, M);
  }
  MPM.run(M, MAM);
}

/// Whether `M` has a coroutine that is not in the form LLVM's coroutine
/// passes expect (one llvm.coro.id and llvm.coro.begin, the begin before
/// every suspend point, each suspend's result switched on), or a suspend
/// point outside a coroutine. Such IR is for jitlock's passes, which look
/// only at where the suspend points are; CoroSplit miscompiles or crashes on
/// it, and is not what is under test.
bool hasMalformedCoroutine(Module &M) {
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    SmallVector<CallBase *, 4> Ids, Begins, Suspends;
    for (Instruction &I : instructions(F))
      if (auto *CB = dyn_cast<CallBase>(&I))
        if (Function *Callee = CB->getCalledFunction()) {
          StringRef Name = Callee->getName();
          if (Name.starts_with("llvm.coro.id"))
            Ids.push_back(CB);
          else if (Name == "llvm.coro.begin")
            Begins.push_back(CB);
          else if (Name.starts_with("llvm.coro.suspend"))
            Suspends.push_back(CB);
        }
    if (Ids.empty() && Begins.empty() && Suspends.empty() &&
        !F.isPresplitCoroutine())
      continue;
    if (Ids.size() != 1 || Begins.size() != 1 || !F.isPresplitCoroutine() ||
        !isa<CallInst>(Begins.front()))
      return true;
    DominatorTree DT(F);
    for (CallBase *S : Suspends) {
      if (!isa<CallInst>(S) || !DT.dominates(Begins.front(), S))
        return true;
      // CoroSplit reads a suspend whose result no switch decides on out of
      // bounds (LLVM 19 crashes in a later pass on the clones it made).
      if (!S->hasOneUse() || !isa<SwitchInst>(*S->user_begin()))
        return true;
    }
  }
  return false;
}

/// Checks what the full lowering promises on success.
void checkFullyLowered(Module &M, const Options &O) {
  for (GlobalValue &GV : M.global_values())
    if (GV.getName().starts_with("jitlock.") && !GV.use_empty())
      finding("the lowering succeeded but left a use of '" + GV.getName() + "'",
              O, M);
  for (Function &F : M)
    if (F.hasFnAttribute(StackBangAttr))
      finding("the lowering succeeded but left \"" + Twine(StackBangAttr) +
                  "\" on '" + F.getName() + "'",
              O, M);
}

} // namespace

namespace jitlock::fuzz {

std::unique_ptr<Module> inputModule(const uint8_t *Data, size_t Size,
                                    LLVMContext &Ctx) {
  if (Size < OptionBytes)
    return nullptr;
  ArrayRef<uint8_t> Rest(Data + OptionBytes, Size - OptionBytes);
  if (Data[0] & GeneratedBit) {
    ByteChoices C(Rest);
    return generateModule(Ctx, C);
  }
  // The parser reads up to a NUL: the text gets one.
  std::string Text(toStringRef(Rest));
  SMDiagnostic Err;
  return parseAssemblyString(Text, Err, Ctx);
}

Outcome runInput(const uint8_t *Data, size_t Size, std::string *Why) {
  if (Size < OptionBytes)
    return Outcome::Skipped;
  Options O = decodeOptions(Data);
  bool Default =
      O.Kind == Pipeline::DefaultO2 || O.Kind == Pipeline::DefaultOther;
  // Bad parameters reach the passes through pipeline text only: a JIT's
  // LoweringConfig cannot hold them.
  if (Default) {
    if (Expected<LoweringConfig> Parsed = LoweringConfig::parse(O.Params);
        !Parsed) {
      consumeError(Parsed.takeError());
      O.Kind = Pipeline::Lower;
      Default = false;
    }
  }
  ArrayRef<uint8_t> Rest(Data + OptionBytes, Size - OptionBytes);

  LLVMContext Ctx;
  auto Handler = std::make_unique<ErrorRecorder>();
  ErrorRecorder &Errors = *Handler;
  Ctx.setDiagnosticHandler(std::move(Handler));

  std::unique_ptr<Module> M = inputModule(Data, Size, Ctx);
  // LLVM's parser and verifier are not under test: invalid input is skipped.
  if (!M || Errors.HadError || verifyModule(*M))
    return Outcome::Skipped;
  if (Default && hasMalformedCoroutine(*M))
    return Outcome::Skipped;
  if (O.HostMachine && Default) {
    // As JitSession does: the module is compiled for this host.
    if (TargetMachine *TM = hostMachine()) {
      M->setTargetTriple(TM->getTargetTriple().str());
      M->setDataLayout(TM->createDataLayout());
      if (verifyModule(*M))
        return Outcome::Skipped;
    }
  }

  // jitlock-verify alone first; a refused module goes no further.
  {
    ModuleAnalysisManager MAM;
    PassBuilder PB;
    PB.registerModuleAnalyses(MAM);
    ModulePassManager MPM;
    MPM.addPass(VerifyPass());
    MPM.run(*M, MAM);
  }
  bool Full = O.Kind != Pipeline::Separate;
  for (int Round = 0; Round < (O.Twice ? 2 : 1) && !Errors.HadError; ++Round) {
    runPipeline(*M, O, Errors);
    if (Errors.HadError)
      break;
    std::string Broken;
    raw_string_ostream BrokenOS(Broken);
    if (verifyModule(*M, &BrokenOS))
      finding("no error was reported, but the module is not valid IR:\n" +
                  Broken,
              O, *M);
    if (Full)
      checkFullyLowered(*M, O);
  }
  if (Errors.HadError) {
    if (Why)
      *Why = Errors.First;
    return Outcome::Refused;
  }
  return Outcome::Lowered;
}

} // namespace jitlock::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  jitlock::fuzz::runInput(Data, Size, nullptr);
  return 0;
}
