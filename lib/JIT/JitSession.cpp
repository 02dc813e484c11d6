//===- JitSession.cpp - Load, lower and JIT one module --------------------===//
//
// The steps of include/jitlock/JIT.h. Every refusal is an llvm::Error that
// names the module and carries the diagnostics; nothing here exits or
// aborts on bad input.
//
//===----------------------------------------------------------------------===//
#include "jitlock/JIT.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>

using namespace llvm;

namespace jitlock {

namespace {

/// What the context's diagnostic handler collected.
struct DiagState {
  std::vector<std::string> Errors;
  std::vector<std::string> Warnings;
  bool Remarks = false;
};

/// Collects errors and warnings instead of printing them (the default
/// handler would print an error and exit the process); prints the remarks
/// asked for: jitlock's with JitOptions::Remarks, and those LLVM's own
/// -pass-remarks, -pass-remarks-missed and -pass-remarks-analysis select.
class CollectingHandler : public DiagnosticHandler {
public:
  explicit CollectingHandler(DiagState &S) : S(S) {}

  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    // Once any remark is enabled, every pass builds its remarks and the
    // context hands them all here.
    if (auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI);
        R && !R->isEnabled())
      return true;
    std::string Text;
    raw_string_ostream OS(Text);
    DiagnosticPrinterRawOStream DP(OS);
    if (auto *R = dyn_cast<DiagnosticInfoOptimizationBase>(&DI)) {
      OS << R->getPassName() << ": in function '" << R->getFunction().getName()
         << "': " << R->getMsg();
    } else {
      DI.print(DP);
    }
    switch (DI.getSeverity()) {
    case DS_Error:
      S.Errors.push_back(std::move(Text));
      break;
    case DS_Warning:
      S.Warnings.push_back(std::move(Text));
      break;
    case DS_Remark:
    case DS_Note:
      if (S.Remarks || isa<DiagnosticInfoOptimizationBase>(&DI))
        errs() << "remark: " << Text << "\n";
      break;
    }
    return true;
  }
  bool isAnalysisRemarkEnabled(StringRef Pass) const override {
    return jitlockRemark(Pass) ||
           DiagnosticHandler::isAnalysisRemarkEnabled(Pass);
  }
  bool isMissedOptRemarkEnabled(StringRef Pass) const override {
    return jitlockRemark(Pass) ||
           DiagnosticHandler::isMissedOptRemarkEnabled(Pass);
  }
  bool isPassedOptRemarkEnabled(StringRef Pass) const override {
    return jitlockRemark(Pass) ||
           DiagnosticHandler::isPassedOptRemarkEnabled(Pass);
  }
  bool isAnyRemarkEnabled() const override {
    return S.Remarks || DiagnosticHandler::isAnyRemarkEnabled();
  }

private:
  bool jitlockRemark(StringRef Pass) const {
    return S.Remarks && Pass == "jitlock";
  }

  DiagState &S;
};

Error failure(StringRef Module, const Twine &What,
              ArrayRef<std::string> Details = {}) {
  std::string Text;
  raw_string_ostream OS(Text);
  OS << Module << ": " << What;
  for (const std::string &D : Details) {
    StringRef Line = StringRef(D).rtrim();
    OS << "\n  " << Line;
  }
  return make_error<StringError>(Text, inconvertibleErrorCode());
}

void initializeNativeTarget() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();
  });
}

} // namespace

struct JitSession::Impl {
  // Declaration order is destruction order reversed: the JIT and the module
  // go before the context that owns their IR.
  orc::ThreadSafeContext TSCtx{std::make_unique<LLVMContext>()};
  DiagState Diags;
  std::string Name;
  JitOptions Opts;
  std::optional<orc::JITTargetMachineBuilder> JTMB;
  std::unique_ptr<TargetMachine> TM;
  std::unique_ptr<Module> M;
  std::unique_ptr<orc::LLJIT> J;
  std::vector<std::string> JitErrors;
  bool PreLowered = false;
  BangMode Bang = BangMode::Watermark;
  LockingMode Locking = LockingMode::Lightweight;
  PollMode Polls = PollMode::Explicit;

  LLVMContext &ctx() { return *TSCtx.getContext(); }
  Error load(MemoryBufferRef Buf);
  Error checkPreLoweredThread(int64_t TlsOffset);
  Error lower();
  Error compile();
};

Error JitSession::Impl::load(MemoryBufferRef Buf) {
  ctx().setDiagnosticHandler(std::make_unique<CollectingHandler>(Diags));

  SMDiagnostic Err;
  M = parseIR(Buf, Err, ctx());
  if (!M) {
    std::string Text;
    raw_string_ostream OS(Text);
    Err.print(nullptr, OS, /*ShowColors=*/false);
    return failure(Name, "cannot be parsed", {Text});
  }
  if (!Diags.Errors.empty())
    return failure(Name, "cannot be parsed", Diags.Errors);
  std::string Broken;
  raw_string_ostream BrokenOS(Broken);
  if (verifyModule(*M, &BrokenOS))
    return failure(Name, "is not valid IR (the LLVM verifier says)", {Broken});

  // The host: the module may leave triple and data layout empty, but it may
  // not ask for another architecture.
  initializeNativeTarget();
  auto Host = orc::JITTargetMachineBuilder::detectHost();
  if (!Host)
    return failure(Name,
                   "cannot target this host: " + toString(Host.takeError()));
  JTMB = std::move(*Host);
  auto Machine = JTMB->createTargetMachine();
  if (!Machine)
    return failure(Name, "cannot create a target machine: " +
                             toString(Machine.takeError()));
  TM = std::move(*Machine);
  const Triple &HostTriple = TM->getTargetTriple();
  if (!M->getTargetTriple().empty()) {
    Triple ModuleTriple(M->getTargetTriple());
    if (ModuleTriple.getArch() != HostTriple.getArch())
      return failure(Name, "is for " + ModuleTriple.str() +
                               ", but this host is " + HostTriple.str());
  }
  M->setTargetTriple(HostTriple.str());
  M->setDataLayout(TM->createDataLayout());

  // Code pre-lowered by opt compiled the layout in: it must be this one.
  if (Metadata *Flag = M->getModuleFlag(LoweredLayoutFlag)) {
    jitlock_rt_layout L;
    jitlock_rt_get_layout(&L);
    std::string Mine = layoutFingerprint(L);
    auto *Stamp = dyn_cast<MDString>(Flag);
    if (!Stamp)
      return failure(Name, Twine("has a module flag ") + LoweredLayoutFlag +
                               " that is not a string");
    if (Stamp->getString() != Mine)
      return failure(
          Name, "was lowered for another runtime layout; refusing it",
          {("module:  " + Stamp->getString()).str(), "runtime: " + Mine});
    PreLowered = true;
  }
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  if (Error E = checkPreLoweredThread(L.thread_tls_offset))
    return E;
  return lower();
}

/// The layout stamp does not cover the thread mode or the TLS offset, which
/// are per process: code pre-lowered with thread=tls and another process's
/// offset would pass it and then address the wrong memory. jitlock-lower-
/// thread stamps how it found the thread (jitlock.lowered-thread), and a
/// "tls" stamp must name this process's offset. The stamp is read, not the
/// code: once the optimizer has run, the offset is folded into the field
/// offsets (thread + 24 becomes thread pointer + one constant), and a
/// frontend may use the thread pointer for its own thread-locals.
Error JitSession::Impl::checkPreLoweredThread(int64_t TlsOffset) {
  Metadata *Flag = M->getModuleFlag(LoweredThreadFlag);
  if (!Flag)
    return Error::success();
  auto *Stamp = dyn_cast<MDString>(Flag);
  if (!Stamp)
    return failure(Name, Twine("has a module flag ") + LoweredThreadFlag +
                             " that is not a string");
  StringRef Mode = Stamp->getString();
  if (Mode == "arg" || Mode == "call")
    return Error::success();
  StringRef Offset = Mode;
  int64_t Lowered;
  if (!Offset.consume_front("tls;tls-offset=") ||
      Offset.getAsInteger(10, Lowered))
    return failure(Name, Twine("has a module flag ") + LoweredThreadFlag +
                             " that names no thread mode: '" + Mode + "'");
  if (Lowered == TlsOffset)
    return Error::success();
  return failure(
      Name,
      "was pre-lowered with thread=tls for another process (the "
      "TLS offset is per process; lower with thread=call, or let "
      "this JIT lower it); refusing it",
      {("module:  thread = thread pointer + " + Twine(Lowered)).str(),
       ("runtime: thread = thread pointer + " + Twine(TlsOffset)).str()});
}

Error JitSession::Impl::lower() {
  // jitlock-verify on the frontend's IR first, so that its diagnostics
  // name the instructions the frontend wrote, not optimized ones.
  {
    ModuleAnalysisManager MAM;
    PassBuilder PB(TM.get());
    PB.registerModuleAnalyses(MAM);
    ModulePassManager MPM;
    MPM.addPass(VerifyPass());
    MPM.run(*M, MAM);
    if (!Diags.Errors.empty())
      return failure(Name, "is refused by jitlock-verify", Diags.Errors);
  }

  LoweringConfig Config = LoweringConfig::forThisProcess();
  // A module that chose its thread mode (jitlock.thread flag) keeps it;
  // the TLS offset is still this process's.
  if (M->getModuleFlag("jitlock.thread"))
    Config.Thread.reset();
  if (!Opts.Inline)
    Config.Inline = false;
  if (!Opts.Elide)
    Config.Elide = false;
  if (Opts.FramePointers)
    for (Function &F : *M)
      if (!F.isDeclaration())
        F.addFnAttr("frame-pointer", "all");
  Config.Bang = Opts.Bang;
  Config.Locking = Opts.Locking;
  // Pre-lowered code keeps its polls: placing more would materialize the
  // thread again, in this JIT's mode rather than the one it was lowered with.
  if (PreLowered) {
    if (Opts.Polls)
      Diags.Warnings.push_back(
          ("polls=" + pollModeName(*Opts.Polls) +
           " is ignored: the module came pre-lowered and keeps the polls it "
           "was lowered with")
              .str());
  } else {
    Config.Polls = Opts.Polls;
    if (!Config.Polls && !M->getModuleFlag("jitlock.polls"))
      Config.Polls = Opts.PollsDefault;
  }
  // The modes the lowering will use; a configuration it cannot resolve is
  // reported by the lowering itself, below.
  if (Expected<ResolvedConfig> R = resolveConfig(*M, Config)) {
    Bang = R->Bang;
    Locking = R->Locking;
    Polls = R->Polls;
  } else {
    consumeError(R.takeError());
  }

  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  // opt's instrumentation: LLVM's -time-passes, -print-after-all,
  // -print-changed and the like take effect, and DebugPassManager prints
  // each pass as it runs.
  PassInstrumentationCallbacks PIC;
  StandardInstrumentations SI(ctx(), Opts.DebugPassManager);
  SI.registerCallbacks(PIC, &MAM);
  PassBuilder PB(TM.get(), PipelineTuningOptions(), std::nullopt, &PIC);
  registerPasses(PB, Config);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  // The lowering joins the default pipeline at its start (PipelineStartEP).
  ModulePassManager MPM =
      PB.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
  MPM.run(*M, MAM);
  if (!Diags.Errors.empty())
    return failure(Name, "is refused: LLVM reported errors while lowering",
                   Diags.Errors);

  std::string Broken;
  raw_string_ostream BrokenOS(Broken);
  if (verifyModule(*M, &BrokenOS))
    return failure(Name, "internal error: the lowered module is not valid IR",
                   {Broken});
  std::vector<std::string> Left;
  for (Function &F : *M)
    if (F.getName().starts_with("jitlock.") && !F.use_empty())
      Left.push_back("'" + F.getName().str() + "' is still called");
  if (!Left.empty())
    return failure(Name, "internal error: the lowering left jitlock.* calls",
                   Left);
  return Error::success();
}

Error JitSession::Impl::compile() {
  if (J)
    return Error::success();
  auto Built =
      orc::LLJITBuilder()
          .setJITTargetMachineBuilder(*JTMB)
          // The C library stays reachable (the code generator may call
          // memset or memcpy); the runtime only through the table below.
          .setProcessSymbolsJITDylibSetup(
              [](orc::LLJIT &J) -> Expected<orc::JITDylibSP> {
                auto &JD = J.getExecutionSession().createBareJITDylib(
                    "<process symbols>");
                auto G =
                    orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                        J.getDataLayout().getGlobalPrefix(),
                        [](const orc::SymbolStringPtr &S) {
                          return !(*S).contains("jitlock");
                        });
                if (!G)
                  return G.takeError();
                JD.addGenerator(std::move(*G));
                return &JD;
              })
          .create();
  if (!Built)
    return failure(Name,
                   "cannot create the JIT: " + toString(Built.takeError()));
  std::unique_ptr<orc::LLJIT> Jit = std::move(*Built);
  Jit->getExecutionSession().setErrorReporter(
      [this](Error E) { JitErrors.push_back(toString(std::move(E))); });

  orc::SymbolMap Runtime;
  for (const RuntimeSymbol &S : runtimeSymbols())
    Runtime[Jit->mangleAndIntern(S.Name)] = orc::ExecutorSymbolDef(
        orc::ExecutorAddr::fromPtr(S.Addr),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  if (Error E = Jit->getMainJITDylib().define(
          orc::absoluteSymbols(std::move(Runtime))))
    return failure(Name, "cannot define the runtime symbols: " +
                             toString(std::move(E)));
  if (Opts.ConfigureJit)
    if (Error E = Opts.ConfigureJit(*Jit))
      return failure(Name,
                     "cannot configure the JIT: " + toString(std::move(E)));
  // The JIT compiles a copy, so that module() stays printable.
  if (Error E = Jit->addIRModule(orc::ThreadSafeModule(CloneModule(*M), TSCtx)))
    return failure(Name,
                   "cannot be added to the JIT: " + toString(std::move(E)));
  J = std::move(Jit);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// JitSession
//===----------------------------------------------------------------------===//

JitSession::JitSession(std::unique_ptr<Impl> I) : P(std::move(I)) {}
JitSession::~JitSession() = default;

Expected<std::unique_ptr<JitSession>>
JitSession::loadBuffer(StringRef Contents, StringRef Name, JitOptions Opts) {
  auto I = std::make_unique<Impl>();
  I->Name = Name.str();
  I->Opts = Opts;
  I->Diags.Remarks = Opts.Remarks;
  if (Error E = I->load(MemoryBufferRef(Contents, Name)))
    return std::move(E);
  return std::unique_ptr<JitSession>(new JitSession(std::move(I)));
}

Expected<std::unique_ptr<JitSession>> JitSession::loadFile(StringRef Path,
                                                           JitOptions Opts) {
  auto Buf = MemoryBuffer::getFileOrSTDIN(Path);
  if (!Buf)
    return failure(Path, "cannot be read: " + Buf.getError().message());
  return loadBuffer((*Buf)->getBuffer(), Path, Opts);
}

const Module &JitSession::module() const { return *P->M; }

void JitSession::printIR(raw_ostream &OS) const { P->M->print(OS, nullptr); }

Error JitSession::printAssembly(raw_ostream &OS) const {
  // Code generation changes the IR it runs on: use a copy.
  std::unique_ptr<Module> Copy = CloneModule(*P->M);
  SmallString<0> Asm;
  raw_svector_ostream AsmOS(Asm);
  legacy::PassManager PM;
  if (P->TM->addPassesToEmitFile(PM, AsmOS, nullptr,
                                 CodeGenFileType::AssemblyFile))
    return failure(P->Name, "the host target cannot emit assembly");
  size_t Before = P->Diags.Errors.size();
  PM.run(*Copy);
  if (P->Diags.Errors.size() != Before)
    return failure(P->Name, "code generation reported errors",
                   ArrayRef(P->Diags.Errors).drop_front(Before));
  OS << Asm;
  return Error::success();
}

ArrayRef<std::string> JitSession::warnings() const { return P->Diags.Warnings; }

bool JitSession::wasPreLowered() const { return P->PreLowered; }

BangMode JitSession::bangMode() const { return P->Bang; }

LockingMode JitSession::lockingMode() const { return P->Locking; }

PollMode JitSession::pollMode() const { return P->Polls; }

/// The slow path every lowered poll calls (P2).
static constexpr StringLiteral RuntimePoll = "jitlock_rt_safepoint_poll";

unsigned JitSession::safepointPollCount() const {
  const Function *Poll = P->M->getFunction(RuntimePoll);
  if (!Poll)
    return 0;
  unsigned N = 0;
  for (const User *U : Poll->users())
    if (const auto *CB = dyn_cast<CallBase>(U))
      N += CB->getCalledOperand() == Poll;
  return N;
}

std::vector<std::string> JitSession::functionsWithUnpolledLoops() const {
  std::vector<std::string> Out;
  for (const Function &F : *P->M) {
    if (F.isDeclaration() || F.hasFnAttribute(PollsPlacedAttr))
      continue;
    SmallVector<std::pair<const BasicBlock *, const BasicBlock *>, 4> Back;
    FindFunctionBackedges(F, Back);
    if (Back.empty() || any_of(instructions(F), mayPoll))
      continue;
    Out.push_back(F.getName().str());
  }
  return Out;
}

bool JitSession::definesFunction(StringRef Name) const {
  const Function *F = P->M->getFunction(Name);
  return F && !F->isDeclaration();
}

Error JitSession::checkFunction(StringRef Name, StringRef Type) const {
  const Function *F = P->M->getFunction(Name);
  if (!F || F->isDeclaration())
    return failure(P->Name,
                   "does not define the function @" + Name + " (" + Type + ")");
  SMDiagnostic Err;
  llvm::Type *Want = parseType(Type, Err, *P->M);
  if (!Want)
    return failure(P->Name, "bad expected type '" + Type + "'");
  if (F->getFunctionType() != Want) {
    std::string Have;
    raw_string_ostream OS(Have);
    F->getFunctionType()->print(OS);
    return failure(P->Name,
                   "@" + Name + " has type " + Have + ", expected " + Type);
  }
  return Error::success();
}

Expected<void *> JitSession::lookup(StringRef Name) {
  if (Error E = P->compile())
    return std::move(E);
  size_t Before = P->Diags.Errors.size();
  P->JitErrors.clear();
  auto Addr = P->J->lookup(Name);
  std::vector<std::string> Details(P->JitErrors);
  Details.insert(Details.end(), P->Diags.Errors.begin() + Before,
                 P->Diags.Errors.end());
  if (!Addr) {
    Details.insert(Details.begin(), toString(Addr.takeError()));
    return failure(P->Name, "cannot look up or compile @" + Name, Details);
  }
  if (!Details.empty())
    return failure(P->Name, "compiling @" + Name + " reported errors", Details);
  return Addr->toPtr<void *>();
}

Expected<std::vector<ModuleObject>> JitSession::objects() {
  jitlock_rt_layout L;
  jitlock_rt_get_layout(&L);
  auto IsObject = [&](const Constant *C) {
    auto *ST = dyn_cast<StructType>(C->getType());
    if (!ST || ST->getNumElements() == 0 ||
        !ST->getElementType(0)->isIntegerTy(64))
      return false;
    auto *H = dyn_cast_or_null<ConstantInt>(C->getAggregateElement(0u));
    return H && (H->getZExtValue() & L.lock_mask) == L.unlocked_value;
  };
  const DataLayout &DL = P->M->getDataLayout();
  std::vector<ModuleObject> Out;
  for (const GlobalVariable &GV : P->M->globals()) {
    if (GV.isDeclaration() || GV.isConstant() || !GV.hasInitializer())
      continue;
    const Constant *Init = GV.getInitializer();
    if (IsObject(Init)) {
      Out.push_back({GV.getName().str(), GV.getName().str(), 0, nullptr});
    } else if (auto *AT = dyn_cast<ArrayType>(Init->getType())) {
      uint64_t Stride = DL.getTypeAllocSize(AT->getElementType());
      for (uint64_t I = 0, E = AT->getNumElements(); I != E; ++I) {
        const Constant *Elt = Init->getAggregateElement(unsigned(I));
        if (Elt && IsObject(Elt))
          Out.push_back({(GV.getName() + "[" + Twine(I) + "]").str(),
                         GV.getName().str(), I * Stride, nullptr});
      }
    }
  }
  for (ModuleObject &O : Out) {
    auto Base = lookup(O.Global);
    if (!Base)
      return Base.takeError();
    O.Addr = static_cast<char *>(*Base) + O.Offset;
  }
  return Out;
}

} // namespace jitlock
