//===- main.cpp - An embedder's own ORC LLJIT with jitlock monitors -------===//
//
// What a JIT of one's own does to use jitlock's monitors, step by step:
//
//   1. configure the runtime (optional; defaults otherwise);
//   2. install a diagnostic handler, so that a module the jitlock passes
//      refuse is an error the JIT reports, not an exit of the process;
//   3. generate IR with IRBuilder that calls jitlock.monitor.enter/exit and
//      jitlock.safepoint.poll, on a function marked "jitlock-stack-bang";
//   4. optimize it with a PassBuilder on which jitlock::registerPasses was
//      called: the lowering joins the O2 pipeline at its start;
//   5. compile it with ORC's LLJIT, the runtime's functions defined as
//      absolute symbols from jitlock::runtimeSymbols(), and run the module's
//      constructors (LLJIT::initialize): the lowering added one that checks
//      the runtime's layout against the one the code was lowered for;
//   6. call it on N attached threads through jitlock_rt_call_guarded, all
//      incrementing one counter under its monitor, and check the total.
//
// Usage: orc-lljit-example [threads] [iterations]. Exit status 0 when the
// total is exact and the bad module was refused, 1 otherwise.
//
//===----------------------------------------------------------------------===//
#include "jitlock/Passes.h"
#include "jitlock/RuntimeSymbols.h"
#include "jitlock/jitlock_rt.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace llvm;

namespace {

/// An object of the embedder's language: the 64-bit header word at offset 0
/// (the runtime's default header_offset), then a field.
struct Counter {
  uint64_t Header = 1; // unlocked, no identity hash
  int64_t Value = 0;
};

//===-- Step 2: errors from the passes ------------------------------------===//

/// Collects error diagnostics. Without a handler, LLVMContext prints an
/// error and exits the process; jitlock-verify reports bad input (an exit
/// without its enter, a wrong signature) as an error diagnostic.
class CollectErrors : public DiagnosticHandler {
public:
  explicit CollectErrors(std::vector<std::string> &Errors) : Errors(Errors) {}
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    if (DI.getSeverity() == DS_Error) {
      std::string Text;
      raw_string_ostream OS(Text);
      DiagnosticPrinterRawOStream DP(OS);
      DI.print(DP);
      Errors.push_back(std::move(Text));
    }
    return true; // handled: nothing is printed, nothing exits
  }

private:
  std::vector<std::string> &Errors;
};

//===-- Step 3: the IR
//-----------------------------------------------------===//

/// void increment(ptr %obj, i64 %n): n times
///   synchronized (obj) { obj.value += 1 }  then a safepoint poll.
/// The function asks for a method-entry stack check ("jitlock-stack-bang"),
/// so that running out of stack in it is recoverable.
void buildIncrement(Module &M) {
  LLVMContext &C = M.getContext();
  Type *Void = Type::getVoidTy(C), *I64 = Type::getInt64Ty(C);
  PointerType *Ptr = PointerType::getUnqual(C);
  // The jitlock interface: declared, never defined.
  FunctionCallee Enter = M.getOrInsertFunction(
      "jitlock.monitor.enter", FunctionType::get(Void, {Ptr}, false));
  FunctionCallee Exit = M.getOrInsertFunction(
      "jitlock.monitor.exit", FunctionType::get(Void, {Ptr}, false));
  FunctionCallee Poll = M.getOrInsertFunction("jitlock.safepoint.poll",
                                              FunctionType::get(Void, false));

  Function *F = Function::Create(FunctionType::get(Void, {Ptr, I64}, false),
                                 Function::ExternalLinkage, "increment", M);
  F->addFnAttr(jitlock::StackBangAttr);
  Argument *Obj = F->getArg(0), *N = F->getArg(1);
  BasicBlock *Entry = BasicBlock::Create(C, "entry", F);
  BasicBlock *Loop = BasicBlock::Create(C, "loop", F);
  BasicBlock *Done = BasicBlock::Create(C, "done", F);

  IRBuilder<> B(Entry);
  B.CreateCondBr(B.CreateICmpEQ(N, B.getInt64(0)), Done, Loop);

  B.SetInsertPoint(Loop);
  PHINode *I = B.CreatePHI(I64, 2, "i");
  I->addIncoming(B.getInt64(0), Entry);
  B.CreateCall(Enter, {Obj});
  // A plain load and store: only the monitor keeps increments from being
  // lost.
  Value *Field = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Obj,
                                              offsetof(Counter, Value));
  Value *Old = B.CreateLoad(I64, Field, "value");
  B.CreateStore(B.CreateAdd(Old, B.getInt64(1)), Field);
  B.CreateCall(Exit, {Obj});
  // Where a thread stops for a safepoint or a handshake.
  B.CreateCall(Poll);
  Value *Next = B.CreateAdd(I, B.getInt64(1), "i.next");
  I->addIncoming(Next, Loop);
  B.CreateCondBr(B.CreateICmpULT(Next, N), Loop, Done);

  B.SetInsertPoint(Done);
  B.CreateRetVoid();
}

/// A module jitlock-verify refuses: one enter, two exits.
void buildUnbalanced(Module &M) {
  LLVMContext &C = M.getContext();
  Type *Void = Type::getVoidTy(C);
  PointerType *Ptr = PointerType::getUnqual(C);
  FunctionType *OnObject = FunctionType::get(Void, {Ptr}, false);
  FunctionCallee Enter =
      M.getOrInsertFunction("jitlock.monitor.enter", OnObject);
  FunctionCallee Exit = M.getOrInsertFunction("jitlock.monitor.exit", OnObject);
  Function *F =
      Function::Create(OnObject, Function::ExternalLinkage, "unbalanced", M);
  IRBuilder<> B(BasicBlock::Create(C, "entry", F));
  B.CreateCall(Enter, {F->getArg(0)});
  B.CreateCall(Exit, {F->getArg(0)});
  B.CreateCall(Exit, {F->getArg(0)});
  B.CreateRetVoid();
}

//===-- Step 4: the pipeline ----------------------------------------------===//

/// Runs O2 with the jitlock lowering on `M`; the errors reported meanwhile
/// (by jitlock-verify among others) come back in `Errors`.
void optimize(Module &M, TargetMachine &TM, std::vector<std::string> &Errors) {
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB(&TM);
  // This process's layout and TLS offset: the lowered code finds its thread
  // at thread pointer + offset, and is valid in this process only.
  jitlock::registerPasses(PB, jitlock::LoweringConfig::forThisProcess());
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  ModulePassManager MPM =
      PB.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
  M.getContext().setDiagnosticHandler(std::make_unique<CollectErrors>(Errors));
  MPM.run(M, MAM);
  std::string Broken;
  raw_string_ostream OS(Broken);
  if (Errors.empty() && verifyModule(M, &OS))
    Errors.push_back("the optimized module is not valid IR: " + Broken);
}

std::unique_ptr<Module> newModule(StringRef Name, LLVMContext &C,
                                  TargetMachine &TM) {
  auto M = std::make_unique<Module>(Name, C);
  M->setTargetTriple(TM.getTargetTriple().str());
  M->setDataLayout(TM.createDataLayout());
  return M;
}

//===-- Step 6: the threads
//------------------------------------------------===//

using IncrementFn = void(void *, int64_t);

struct Work {
  IncrementFn *Fn;
  Counter *Obj;
  int64_t Iterations;
};

/// The entry into JIT code, for jitlock_rt_call_guarded: if the code runs
/// out of stack, the call returns JITLOCK_ESTACK_OVERFLOW with every monitor
/// taken inside released, instead of the process dying.
void runWork(void *Arg) {
  auto *W = static_cast<Work *>(Arg);
  W->Fn(W->Obj, W->Iterations);
}

int fail(const std::string &Msg) {
  std::fprintf(stderr, "orc-lljit-example: %s\n", Msg.c_str());
  return 1;
}

} // namespace

int main(int Argc, char **Argv) {
  const unsigned Threads = Argc > 1 ? unsigned(std::atoi(Argv[1])) : 4;
  const int64_t Iterations = Argc > 2 ? std::atoll(Argv[2]) : 100000;
  if (Threads == 0 || Iterations <= 0)
    return fail("usage: orc-lljit-example [threads > 0] [iterations > 0]");

  // Step 1: the runtime's configuration, before any thread attaches and
  // before the layout is handed out to the lowering (step 4), which freezes
  // it: jitlock_rt_configure refuses another layout afterwards. The
  // defaults put the header at offset 0, as Counter has it.
  jitlock_rt_config Cfg;
  jitlock_rt_default_config(&Cfg);
  if (int Rc = jitlock_rt_configure(&Cfg); Rc != JITLOCK_OK)
    return fail(std::string("configure: ") + jitlock_rt_status_name(Rc));

  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  auto JTMB = orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB)
    return fail(toString(JTMB.takeError()));
  auto TM = JTMB->createTargetMachine();
  if (!TM)
    return fail(toString(TM.takeError()));

  // Steps 2-4 on a bad module first: refused, with the reason, and the
  // process carries on.
  {
    LLVMContext C;
    auto Bad = newModule("bad", C, **TM);
    buildUnbalanced(*Bad);
    std::vector<std::string> Errors;
    optimize(*Bad, **TM, Errors);
    if (Errors.empty())
      return fail("the unbalanced module was not refused");
    std::printf("refused, as it should be: %s\n", Errors.front().c_str());
  }

  // Steps 3-4 on the real module.
  auto Ctx = std::make_unique<LLVMContext>();
  auto M = newModule("counter", *Ctx, **TM);
  buildIncrement(*M);
  std::vector<std::string> Errors;
  optimize(*M, **TM, Errors);
  if (!Errors.empty())
    return fail("the module was refused: " + Errors.front());

  // Step 5: the JIT. The runtime is linked statically with hidden symbols,
  // so the process does not export it: define the names lowered code calls.
  auto J = orc::LLJITBuilder().setJITTargetMachineBuilder(*JTMB).create();
  if (!J)
    return fail(toString(J.takeError()));
  orc::SymbolMap Runtime;
  for (const jitlock::RuntimeSymbol &S : jitlock::runtimeSymbols())
    Runtime[(*J)->mangleAndIntern(S.Name)] = orc::ExecutorSymbolDef(
        orc::ExecutorAddr::fromPtr(S.Addr),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  if (Error E = (*J)->getMainJITDylib().define(
          orc::absoluteSymbols(std::move(Runtime))))
    return fail(toString(std::move(E)));
  if (Error E = (*J)->addIRModule(
          orc::ThreadSafeModule(std::move(M), std::move(Ctx))))
    return fail(toString(std::move(E)));
  // The module's constructors, the layout check among them: code lowered
  // for another layout (a header offset, a monitor storage) stops here with
  // a message naming both, instead of miscounting or faulting later.
  if (Error E = (*J)->initialize((*J)->getMainJITDylib()))
    return fail(toString(std::move(E)));
  auto Addr = (*J)->lookup("increment");
  if (!Addr)
    return fail(toString(Addr.takeError()));
  IncrementFn *Increment = Addr->toPtr<IncrementFn *>();

  // Step 6: N attached threads, released together so that they contend.
  Counter Obj;
  std::atomic<unsigned> Ready{0};
  std::atomic<bool> Go{false};
  std::atomic<unsigned> Failures{0};
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back([&] {
      // JIT code runs on attached threads only.
      jitlock_thread *Self = jitlock_rt_attach();
      // Waiting outside the runtime: `native`, so that a safepoint (the
      // runtime's, or the VM's) never waits for this thread meanwhile.
      jitlock_rt_enter_native(Self);
      Ready.fetch_add(1);
      while (!Go.load())
        std::this_thread::yield();
      jitlock_rt_leave_native(Self);

      Work W{Increment, &Obj, Iterations};
      jitlock_guarded_result Result{};
      int Rc = jitlock_rt_call_guarded(Self, runWork, &W, &Result);
      if (Rc != JITLOCK_OK) {
        std::fprintf(stderr, "orc-lljit-example: thread %llu: %s\n",
                     (unsigned long long)jitlock_rt_thread_id(Self),
                     jitlock_rt_status_name(Rc));
        Failures.fetch_add(1);
      }
      // A thread detaches holding no lock; detach refuses otherwise.
      if (jitlock_rt_detach() != JITLOCK_OK)
        Failures.fetch_add(1);
    });
  while (Ready.load() != Threads)
    std::this_thread::yield();
  Go.store(true);
  for (std::thread &T : Pool)
    T.join();

  jitlock_rt_stats Stats;
  jitlock_rt_get_stats(&Stats);
  const int64_t Expected = int64_t(Threads) * Iterations;
  std::printf("%u threads x %lld increments: counter = %lld (expected %lld)\n",
              Threads, (long long)Iterations, (long long)Obj.Value,
              (long long)Expected);
  std::printf("runtime calls: %llu (contended enters %llu, inflations %llu)\n",
              (unsigned long long)Stats.slow_path_calls,
              (unsigned long long)Stats.contended_enters,
              (unsigned long long)Stats.inflations);

  // Every thread has detached: the runtime gives inflated objects their
  // headers back and frees its monitors.
  if (int Rc = jitlock_rt_shutdown(); Rc != JITLOCK_OK)
    return fail(std::string("shutdown: ") + jitlock_rt_status_name(Rc));
  if (Failures.load() != 0 || Obj.Value != Expected || Obj.Header != 1)
    return fail("FAILED");
  std::printf("OK\n");
  return 0;
}
