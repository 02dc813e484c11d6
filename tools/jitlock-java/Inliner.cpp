//===- Inliner.cpp - Tier 1's inlining of small callees -------------------===//
#include "Inliner.h"
#include "PassSetup.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/CorrelatedValuePropagation.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace llvm;

namespace jitlock::java {

namespace {

/// Replaces the inttoptr casts of one integer with one cast placed right
/// after the integer is defined. Tier 1 keeps objects in i64 slots and casts
/// at each use, and the jitlock passes tell objects apart by SSA value (casts
/// of pointers stripped, not casts of integers): this way the caller's
/// monitor enter and an inlined callee's on the same object name one value.
void unifyPointerCasts(Function &F) {
  DenseMap<std::pair<Value *, Type *>, SmallVector<IntToPtrInst *, 2>> Casts;
  for (Instruction &I : instructions(F))
    if (auto *Cast = dyn_cast<IntToPtrInst>(&I))
      Casts[{Cast->getOperand(0), Cast->getType()}].push_back(Cast);
  for (auto &[Key, Uses] : Casts) {
    if (Uses.size() < 2)
      continue;
    Value *Int = Key.first;
    BasicBlock::iterator At;
    if (auto *Def = dyn_cast<Instruction>(Int)) {
      if (Def->isTerminator())
        continue; // an invoke's result: no single place after it
      At = std::next(Def->getIterator());
      if (isa<PHINode>(Def))
        At = Def->getParent()->getFirstInsertionPt();
    } else if (isa<Argument>(Int)) {
      At = F.getEntryBlock().getFirstInsertionPt();
    } else {
      continue; // a constant: casts of it are constants already
    }
    auto *One = new IntToPtrInst(Int, Key.second, "obj", At);
    for (IntToPtrInst *Cast : Uses) {
      Cast->replaceAllUsesWith(One);
      Cast->eraseFromParent();
    }
  }
}

} // namespace

bool inlineBodies(Function &F, std::string &Why) {
  SmallPtrSet<Function *, 8> Bodies;
  for (;;) {
    SmallVector<CallBase *, 8> Calls;
    for (BasicBlock &BB : F)
      for (Instruction &I : BB)
        if (auto *CB = dyn_cast<CallBase>(&I))
          if (Function *Callee = CB->getCalledFunction();
              Callee && Callee->hasFnAttribute(InlineBodyAttr))
            Calls.push_back(CB);
    if (Calls.empty())
      break;
    for (CallBase *CB : Calls) {
      Function *Body = CB->getCalledFunction();
      Bodies.insert(Body);
      InlineFunctionInfo IFI;
      if (InlineResult R = InlineFunction(*CB, IFI); !R.isSuccess()) {
        Why = "LLVM could not inline " + Body->getName().str() + ": " +
              R.getFailureReason();
        return false;
      }
    }
  }
  for (Function *Body : Bodies)
    if (Body->use_empty())
      Body->eraseFromParent();
  return true;
}

bool numberVirtualFrames(Function &F) {
  SmallVector<CallInst *, 8> Traps;
  for (Instruction &I : instructions(F))
    if (auto *CI = dyn_cast<CallInst>(&I);
        CI && CI->getIntrinsicID() == Intrinsic::experimental_deoptimize)
      Traps.push_back(CI);
  for (CallInst *CI : Traps) {
    ArrayRef<Use> Ops = CI->getOperandBundle(LLVMContext::OB_deopt)->Inputs;
    // Each frame: method, bci, #locals, #stack, #monitors, then its slots.
    uint32_t Frames = 0;
    size_t At = 0;
    while (At + 1 < Ops.size()) {
      if (At + 6 > Ops.size())
        return false;
      auto *NumLocals = dyn_cast<ConstantInt>(Ops[At + 2]);
      auto *NumStack = dyn_cast<ConstantInt>(Ops[At + 3]);
      if (!NumLocals || !NumStack)
        return false;
      At += 5 + NumLocals->getZExtValue() + NumStack->getZExtValue();
      ++Frames;
    }
    if (At + 1 != Ops.size() || !Frames)
      return false;
    SmallVector<Value *, 32> State{
        ConstantInt::get(Type::getInt32Ty(F.getContext()), Frames)};
    State.append(Ops.begin(), Ops.end());
    CallBase *Numbered = CallBase::Create(
        CI, {OperandBundleDef("deopt", State)}, CI->getIterator());
    Numbered->takeName(CI);
    CI->replaceAllUsesWith(Numbered);
    CI->eraseFromParent();
  }
  return true;
}

void simplifySlots(Function &F) {
  PassBuilder PB;
  jitlock::tools::AnalysisManagers AM(PB);
  FunctionPassManager FPM;
  FPM.addPass(SROAPass(SROAOptions::ModifyCFG));
  FPM.addPass(EarlyCSEPass());
  FPM.addPass(InstCombinePass());
  FPM.addPass(SimplifyCFGPass());
  FPM.addPass(SROAPass(SROAOptions::ModifyCFG));
  FPM.addPass(InstCombinePass());
  FPM.addPass(SimplifyCFGPass());
  FPM.addPass(InstCombinePass());
  FPM.addPass(CorrelatedValuePropagationPass());
  FPM.addPass(SimplifyCFGPass());
  FPM.run(F, AM.FAM);
  unifyPointerCasts(F);
}

} // namespace jitlock::java
