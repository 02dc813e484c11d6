//===- Inliner.cpp - Tier 1's inlining of small callees -------------------===//
#include "Inliner.h"

#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
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

unsigned inlineBodies(Function &F) {
  unsigned Inlined = 0;
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
      Bodies.insert(CB->getCalledFunction());
      InlineFunctionInfo IFI;
      if (InlineFunction(*CB, IFI).isSuccess())
        ++Inlined;
    }
  }
  for (Function *Body : Bodies)
    if (Body->use_empty())
      Body->eraseFromParent();
  if (!Inlined)
    return 0;
  // Before the O2 pipeline, whose jitlock passes come first: the slots
  // become SSA values (an inlined `this` is the caller's object again,
  // the inttoptr of its ptrtoint folded), each inlined return's "threw"
  // flag a constant on its path, and the null checks the caller already
  // made of the same object are folded away.
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;
  PassBuilder PB;
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
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
  FPM.run(F, FAM);
  unifyPointerCasts(F);
  return Inlined;
}

} // namespace jitlock::java
