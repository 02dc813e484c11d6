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
// A coroutine that CoroSplit has not split yet is the exception: it may be
// resumed on another thread after each suspend point, and a thread computed
// once at its entry would be spilled into the coroutine frame and reloaded
// there, so that the resumed code would use the lock stack of the thread
// that created the coroutine. So in such a function:
//   * the default pipelines leave the requests alone at their start
//     (Coroutines::Defer) and lower them at their end, after CoroSplit, once
//     per function it produced (ramp, resume, destroy): each is entered on
//     the thread that runs it. Until then a request is an opaque call, which
//     no pass merges or moves across a suspend point;
//   * otherwise (pipeline text, or a coroutine still unsplit at the end)
//     the thread is computed at each request, where the request is: each
//     lowered operation computes its own, and nothing thread-derived is live
//     across a suspend point. LLVM's passes do not merge or hoist a call
//     that accesses no memory (llvm.thread.pointer, jitlock_rt_code_thread)
//     across a suspend point of an unsplit coroutine, which is what makes
//     C++ thread_local work in coroutines too;
//   * arg mode cannot follow a coroutine to the thread that resumes it (the
//     marked parameter is the thread that created it): an error.
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
#include "llvm/Transforms/Utils/Local.h"

#define DEBUG_TYPE "jitlock-lower-thread"

using namespace llvm;

STATISTIC(NumThreadsMaterialized, "Functions given a current-thread value");
STATISTIC(NumCoroutineRequests,
          "Unsplit coroutines given the current thread at each request");

namespace jitlock {

const char *threadParameterProblem(const Function &F) {
  for (const Argument &A : F.args())
    if (F.getAttributes().hasParamAttr(A.getArgNo(), ThreadArgAttr))
      return !A.getType()->isPointerTy()
                 ? "the parameter marked \"jitlock.thread\" is not a pointer"
             : A.getType() != PointerType::getUnqual(F.getContext())
                 ? "the parameter marked \"jitlock.thread\" is a pointer "
                   "outside the default address space"
                 : nullptr;
  return "thread=arg, but no parameter of the function is marked "
         "\"jitlock.thread\"";
}

/// Optimizing before the lowering can leave a call that passes undef or
/// poison for the marked parameter: until the lowering uses it, nothing does,
/// and dead argument elimination says so. The code would then lock with no
/// thread at all.
static void reportUndefThreadArguments(Function &F, unsigned ArgNo) {
  for (User *U : F.users())
    if (auto *CB = dyn_cast<CallBase>(U);
        CB && CB->getCalledOperand() == &F && ArgNo < CB->arg_size() &&
        isa<UndefValue>(CB->getArgOperand(ArgNo)))
      reportError(*CB, "thread=arg, but this call passes no thread (undef or "
                       "poison) for the \"jitlock.thread\" parameter of '" +
                           F.getName() +
                           "', as an optimization before the lowering may "
                           "leave it; lower before optimizing");
}

/// The current thread for `F`, computed before `Where` (inside the funclet
/// `Pad`, for a call); null (after a diagnostic) when `arg` mode finds no
/// marked parameter.
static Value *materialize(Function &F, const ResolvedConfig &C,
                          Instruction &FirstUse, Instruction *Where,
                          Instruction *Pad) {
  Module &M = *F.getParent();
  IRBuilder<> B(Where);
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
      if (F.getAttributes().hasParamAttr(A.getArgNo(), ThreadArgAttr)) {
        reportUndefThreadArguments(F, A.getArgNo());
        return &A;
      }
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
    return createCallIn(B, Current, {}, Pad, "jitlock.thread");
  }
  }
  llvm_unreachable("unknown thread mode");
}

PreservedAnalyses LowerThreadPass::run(Module &M, ModuleAnalysisManager &MAM) {
  Function *ThreadFn = M.getFunction(ThreadName);
  if (!ThreadFn)
    return PreservedAnalyses::all();
  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved)
    return PreservedAnalyses::all();

  // The requests, by function. jitlock.thread() never unwinds: an invoke of
  // it is a call and a branch.
  MapVector<Function *, SmallVector<CallInst *, 8>> Uses;
  SmallVector<CallBase *, 8> Requests;
  for (Use &U : ThreadFn->uses())
    if (auto *CB = dyn_cast<CallBase>(U.getUser());
        CB && CB->isCallee(&U) && isWellFormedCall(*CB, ThreadName))
      Requests.push_back(CB);
  for (CallBase *CB : Requests) {
    if (auto *II = dyn_cast<InvokeInst>(CB))
      CB = changeToCall(II);
    if (auto *CI = dyn_cast<CallInst>(CB))
      Uses[CI->getFunction()].push_back(CI);
  }

  const ResolvedConfig &C = *Resolved;
  FuncletColors Funclets;
  bool Deferred = false;
  for (auto &[F, Calls] : Uses) {
    if (!isUnsplitCoroutine(*F)) {
      Value *Thread = materialize(*F, C, *Calls.front(),
                                  &*F->getEntryBlock().getFirstInsertionPt(),
                                  /*Pad=*/nullptr);
      if (!Thread)
        continue;
      ++NumThreadsMaterialized;
      for (CallInst *CI : Calls) {
        CI->replaceAllUsesWith(Thread);
        CI->eraseFromParent();
      }
      continue;
    }
    if (C.Thread == ThreadMode::Arg) {
      reportError(*Calls.front(),
                  "thread=arg cannot follow a coroutine to the thread that "
                  "resumes it (the marked parameter is the thread that "
                  "created it); lower coroutines with thread=tls or "
                  "thread=call");
      continue;
    }
    if (InCoroutines == Coroutines::Defer) {
      // Left for the instance after CoroSplit; see the comment at the top.
      // A request the frontend declared as reading no memory would not
      // stay put until then.
      for (CallInst *CI : Calls)
        CI->removeFnAttr(Attribute::Memory);
      Deferred = true;
      continue;
    }
    ++NumCoroutineRequests;
    for (CallInst *CI : Calls) {
      Value *Thread = materialize(*F, C, *CI, CI, Funclets.padOf(*CI));
      CI->replaceAllUsesWith(Thread);
      CI->eraseFromParent();
    }
  }
  if (Deferred) {
    ThreadFn->removeFnAttr(Attribute::Memory);
    ThreadFn->removeFnAttr(Attribute::Speculatable);
  }
  if (ThreadFn->use_empty())
    ThreadFn->eraseFromParent();

  // Stamp how the thread is found: with `tls`, the code is only valid in a
  // process whose runtime reports the same offset.
  std::string Stamp = C.Thread == ThreadMode::TLS
                          ? "tls;tls-offset=" + std::to_string(C.TlsOffset)
                      : C.Thread == ThreadMode::Arg ? "arg"
                                                    : "call";
  MDString *Old = stampModule(M, LoweredThreadFlag, Stamp);
  if (Old && Old->getString() != Stamp)
    reportError(M.getContext(), "conflicting configuration: module already "
                                "lowered with thread=" +
                                    Old->getString() +
                                    ", now with thread=" + Stamp);
  return preservedByLowering();
}

} // namespace jitlock
