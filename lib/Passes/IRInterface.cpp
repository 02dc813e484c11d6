//===- IRInterface.cpp - What the lowerings share about their input -------===//
//
// Coroutines, EH funclets and the thread request: the shapes of IR around a
// jitlock call that every lowering must treat the same way.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace jitlock {

bool isJitlockCall(const CallBase &CB) {
  const Function *F = CB.getCalledFunction();
  if (!F)
    return false;
  StringRef Name = F->getName();
  return (Name == MonitorEnterName || Name == MonitorExitName ||
          Name == MonitorElidedEnterName || Name == MonitorElidedExitName ||
          Name == ThreadName || Name == SafepointPollName) &&
         isWellFormedCall(CB, Name);
}

namespace {
/// What a call of a coroutine intrinsic is, for the two questions below.
enum class CoroutineCall { None, Id, Suspend };

CoroutineCall coroutineCall(const Instruction &I) {
  const auto *II = dyn_cast<IntrinsicInst>(&I);
  switch (II ? II->getIntrinsicID() : Intrinsic::not_intrinsic) {
  case Intrinsic::coro_suspend:
  case Intrinsic::coro_suspend_retcon:
  case Intrinsic::coro_suspend_async:
    return CoroutineCall::Suspend;
  case Intrinsic::coro_id:
  case Intrinsic::coro_id_retcon:
  case Intrinsic::coro_id_retcon_once:
  case Intrinsic::coro_id_async:
    return CoroutineCall::Id;
  default:
    return CoroutineCall::None;
  }
}
} // namespace

bool isCoroutineSuspend(const Instruction &I) {
  return coroutineCall(I) == CoroutineCall::Suspend;
}

bool isUnsplitCoroutine(const Function &F) {
  return F.isPresplitCoroutine() ||
         any_of(instructions(F), [](const Instruction &I) {
           return coroutineCall(I) != CoroutineCall::None;
         });
}

Instruction *FuncletColors::padOf(const Instruction &I) {
  Function &F = const_cast<Function &>(*I.getFunction());
  auto [Entry, New] = Colors.try_emplace(&F);
  if (New && F.hasPersonalityFn() &&
      isFuncletEHPersonality(classifyEHPersonality(F.getPersonalityFn())))
    Entry->second = colorEHFunclets(F);
  auto It = Entry->second.find(const_cast<BasicBlock *>(I.getParent()));
  if (It != Entry->second.end() && It->second.size() == 1) {
    Instruction *First = It->second.front()->getFirstNonPHI();
    return isa<FuncletPadInst>(First) ? First : nullptr;
  }
  if (const auto *CB = dyn_cast<CallBase>(&I))
    if (auto Bundle = CB->getOperandBundle(LLVMContext::OB_funclet))
      return dyn_cast<Instruction>(Bundle->Inputs.front().get());
  return nullptr;
}

SmallVector<OperandBundleDef, 1> funcletBundle(Instruction *Pad) {
  SmallVector<OperandBundleDef, 1> Bundles;
  if (Pad)
    Bundles.emplace_back("funclet", Pad);
  return Bundles;
}

CallInst *createCallIn(IRBuilderBase &B, FunctionCallee Callee,
                       ArrayRef<Value *> Args, Instruction *Pad,
                       const Twine &Name) {
  return B.CreateCall(Callee, Args, funcletBundle(Pad), Name);
}

CallInst *requestThread(IRBuilderBase &B, Instruction *Pad) {
  Module &M = *B.GetInsertBlock()->getModule();
  FunctionCallee Thread = M.getOrInsertFunction(
      ThreadName, FunctionType::get(B.getPtrTy(), /*isVarArg=*/false));
  return createCallIn(B, Thread, {}, Pad);
}

} // namespace jitlock
