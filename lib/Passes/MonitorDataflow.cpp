//===- MonitorDataflow.cpp - Collecting a function's monitor operations ---===//
#include "MonitorDataflow.h"
#include "IRInterface.h"

#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/IR/InstrTypes.h"

using namespace llvm;

namespace jitlock {

const Value *lockedObject(const CallBase &CB) {
  return CB.getArgOperand(0)->stripPointerCasts();
}

/// The monitor operation `CB` is, if any.
static std::optional<MonitorOpKind> monitorCallKind(const CallBase &CB) {
  for (auto [Name, Kind] :
       {std::pair(MonitorEnterName, MonitorOpKind::Enter),
        std::pair(MonitorExitName, MonitorOpKind::Exit),
        std::pair(MonitorElidedEnterName, MonitorOpKind::ElidedEnter),
        std::pair(MonitorElidedExitName, MonitorOpKind::ElidedExit)})
    if (isWellFormedCall(CB, Name))
      return Kind;
  return std::nullopt;
}

MonitorOps::MonitorOps(Function &F) : F(F) {
  for (BasicBlock *BB : ReversePostOrderTraversal<Function *>(&F)) {
    Index[BB] = Order.size();
    Order.push_back(BB);
  }
  Blocks.resize(Order.size());
  // The keys the function enters, first.
  DenseMap<std::pair<const Value *, unsigned>, unsigned> KeyIndex;
  for (BasicBlock *BB : Order)
    for (Instruction &I : *BB)
      if (auto *CB = dyn_cast<CallBase>(&I)) {
        std::optional<MonitorOpKind> Kind = monitorCallKind(*CB);
        if (!Kind || (*Kind != MonitorOpKind::Enter &&
                      *Kind != MonitorOpKind::ElidedEnter))
          continue;
        MonitorKey K{lockedObject(*CB), *Kind == MonitorOpKind::ElidedEnter};
        if (KeyIndex.try_emplace({K.Obj, unsigned(K.Elided)}, Keys.size())
                .second)
          Keys.push_back(K);
      }
  for (auto [N, BB] : enumerate(Order)) {
    Block &Info = Blocks[N];
    for (Instruction &I : *BB) {
      if (isCoroutineSuspend(I)) {
        Info.Ops.push_back({&I, MonitorOpKind::Suspend});
        continue;
      }
      // The return after llvm.experimental.deoptimize is never reached: the
      // frame continues in the interpreter, with its monitors.
      if (isa<ResumeInst>(I) ||
          (isa<ReturnInst>(I) &&
           !I.getParent()->getTerminatingDeoptimizeCall())) {
        Info.Ops.push_back({&I, MonitorOpKind::FrameExit});
        continue;
      }
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB)
        continue;
      if (CB->getOperandBundle(LLVMContext::OB_deopt)) {
        Info.Ops.push_back({&I, MonitorOpKind::DeoptPoint});
        continue;
      }
      std::optional<MonitorOpKind> Kind = monitorCallKind(*CB);
      if (!Kind)
        continue;
      bool Elided = *Kind == MonitorOpKind::ElidedEnter ||
                    *Kind == MonitorOpKind::ElidedExit;
      auto It = KeyIndex.find({lockedObject(*CB), unsigned(Elided)});
      if (It != KeyIndex.end())
        Info.Ops.push_back({&I, *Kind, It->second});
    }
    for (const BasicBlock *Pred : predecessors(BB)) {
      auto It = Index.find(Pred);
      if (It != Index.end() && It->second >= N)
        Info.BackEdgeTarget = true;
    }
  }
}

bool MonitorOps::isRealEdge(const BasicBlock *Pred, const BasicBlock *BB) {
  auto *II = dyn_cast<InvokeInst>(Pred->getTerminator());
  return !II || II->getUnwindDest() != BB || II->getNormalDest() == BB ||
         !isJitlockCall(*II);
}

void MonitorList::apply(State &S, const MonitorOp &O) const {
  if (S.Unknown)
    return;
  if (O.isEnter()) {
    S.Held.push_back(O.Key);
  } else if (O.isExit()) {
    auto It = std::find(S.Held.rbegin(), S.Held.rend(), O.Key);
    if (It == S.Held.rend()) {
      S.Held.clear();
      S.Unknown = true;
      return;
    }
    S.Held.erase(std::next(It).base());
  }
}

} // namespace jitlock
