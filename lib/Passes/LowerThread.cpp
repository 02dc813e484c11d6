//===- LowerThread.cpp - Materializing the current thread -----------------===//
//
// Replaces every jitlock.thread() call with one value per function, computed
// at the top of the entry block:
//   tls   llvm.thread.pointer + thread_tls_offset (one instruction on both
//         targets; the offset folds into each field access)
//   arg   the parameter marked "jitlock.thread"
//   call  jitlock_rt_code_thread() (never null: a detached thread takes
//         the slow paths, which refuse)
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

#define DEBUG_TYPE "jitlock-lower-thread"

using namespace llvm;

STATISTIC(NumThreadsMaterialized, "Functions given a current-thread value");

namespace jitlock {

const char *threadParameterProblem(const Function &F) {
  for (const Argument &A : F.args())
    if (F.getAttributes().hasParamAttr(A.getArgNo(), ThreadArgAttr))
      return A.getType()->isPointerTy()
                 ? nullptr
                 : "the parameter marked \"jitlock.thread\" is not a pointer";
  return "thread=arg, but no parameter of the function is marked "
         "\"jitlock.thread\"";
}

/// The current thread for `F`, computed in its entry block; null (after a
/// diagnostic) when `arg` mode finds no marked parameter.
static Value *materialize(Function &F, const ResolvedConfig &C,
                          Instruction &FirstUse) {
  Module &M = *F.getParent();
  IRBuilder<> B(&*F.getEntryBlock().getFirstInsertionPt());
  switch (C.Thread) {
  case ThreadMode::TLS: {
    Value *TP = B.CreateIntrinsic(Intrinsic::thread_pointer, {}, {}, nullptr,
                                  "jitlock.tp");
    return B.CreateGEP(B.getInt8Ty(), TP, B.getInt64(C.TlsOffset),
                       "jitlock.thread");
  }
  case ThreadMode::Arg:
    if (const char *Problem = threadParameterProblem(F)) {
      reportError(FirstUse, Problem);
      return nullptr;
    }
    for (Argument &A : F.args())
      if (F.getAttributes().hasParamAttr(A.getArgNo(), ThreadArgAttr))
        return &A;
    llvm_unreachable("no problem, so a marked pointer parameter exists");
  case ThreadMode::Call: {
    FunctionCallee Current = M.getOrInsertFunction(
        "jitlock_rt_code_thread", FunctionType::get(B.getPtrTy(), false));
    // Its result is fixed for the thread, like llvm.thread.pointer's, so
    // copies that inlining brings together can be merged.
    if (auto *Fn = dyn_cast<Function>(Current.getCallee())) {
      Fn->setDoesNotThrow();
      Fn->setWillReturn();
      Fn->setDoesNotAccessMemory();
    }
    return B.CreateCall(Current, {}, "jitlock.thread");
  }
  }
  llvm_unreachable("unknown thread mode");
}

PreservedAnalyses LowerThreadPass::run(Module &M, ModuleAnalysisManager &) {
  Function *ThreadFn = M.getFunction(ThreadName);
  if (!ThreadFn)
    return PreservedAnalyses::all();
  Expected<ResolvedConfig> Resolved = resolveConfig(M, Config);
  if (!Resolved) {
    reportError(M.getContext(), toString(Resolved.takeError()));
    return PreservedAnalyses::all();
  }

  MapVector<Function *, SmallVector<CallInst *, 8>> Uses;
  for (User *U : ThreadFn->users())
    if (auto *CI = dyn_cast<CallInst>(U);
        CI && isWellFormedCall(*CI, ThreadName))
      Uses[CI->getFunction()].push_back(CI);

  const ResolvedConfig &C = *Resolved;
  for (auto &[F, Calls] : Uses) {
    Value *Thread = materialize(*F, C, *Calls.front());
    if (!Thread)
      continue;
    ++NumThreadsMaterialized;
    for (CallInst *CI : Calls) {
      CI->replaceAllUsesWith(Thread);
      CI->eraseFromParent();
    }
  }
  if (ThreadFn->use_empty())
    ThreadFn->eraseFromParent();

  // Stamp how the thread is found: with `tls`, the code is only valid in a
  // process whose runtime reports the same offset.
  std::string Stamp = C.Thread == ThreadMode::TLS
                          ? "tls;tls-offset=" + std::to_string(C.TlsOffset)
                      : C.Thread == ThreadMode::Arg ? "arg"
                                                    : "call";
  if (auto *Old =
          dyn_cast_or_null<MDString>(M.getModuleFlag(LoweredThreadFlag))) {
    if (Old->getString() != Stamp)
      reportError(M.getContext(), "conflicting configuration: module already "
                                  "lowered with thread=" +
                                      Old->getString() +
                                      ", now with thread=" + Stamp);
  } else {
    M.addModuleFlag(Module::Error, LoweredThreadFlag,
                    MDString::get(M.getContext(), Stamp));
  }
  return PreservedAnalyses::none();
}

} // namespace jitlock
