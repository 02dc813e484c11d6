//===- DeoptState.cpp - The frame's monitors in each deopt bundle ---------===//
//
// jitlock-deopt-state appends to every "deopt" operand bundle the monitors
// the frame holds at that point, held and elided, outermost first, in the
// encoding of include/jitlock/DeoptState.h, and then deletes the elided
// markers jitlock-elide left. The list comes from the acquisition-ordered
// monitor list of MonitorDataflow.h: where paths disagree, or an exit finds
// no enter, the monitors are unknown, and a deopt point there is an error
// rather than a guess.
//
// A call whose bundle already ends with a complete group (the pass ran
// before) keeps it: after the lowering the monitor calls are gone, and a
// second description would be empty and wrong.
//
//===----------------------------------------------------------------------===//
#include "jitlock/DeoptState.h"
#include "IRInterface.h"
#include "MonitorDataflow.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Local.h"

#define DEBUG_TYPE "jitlock-deopt-state"

using namespace llvm;

STATISTIC(NumDeoptPoints, "Deopt points given their monitors");
STATISTIC(NumDeoptMonitors, "Monitors listed in deopt bundles");

namespace jitlock {

namespace {

/// Whether the deopt operands `Ops` end with a monitor group: a marker
/// whose count reaches the end exactly, with kinds 0 or 1.
bool hasMonitorGroup(ArrayRef<Use> Ops) {
  auto ConstantOf = [](const Use &U) -> std::optional<uint64_t> {
    auto *C = dyn_cast<ConstantInt>(U.get());
    if (!C || C->getBitWidth() != 32)
      return std::nullopt;
    return C->getZExtValue();
  };
  for (size_t At = 0; At + JITLOCK_DEOPT_MONITORS_HEADER_OPERANDS <= Ops.size();
       ++At) {
    if (ConstantOf(Ops[At]) != JITLOCK_DEOPT_MONITORS_MARKER)
      continue;
    std::optional<uint64_t> Count = ConstantOf(Ops[At + 1]);
    if (!Count || At + JITLOCK_DEOPT_MONITORS_HEADER_OPERANDS +
                          *Count * JITLOCK_DEOPT_MONITOR_PAIR_OPERANDS !=
                      Ops.size())
      continue;
    bool KindsOk = true;
    for (uint64_t N = 0; N != *Count; ++N) {
      std::optional<uint64_t> Kind =
          ConstantOf(Ops[At + JITLOCK_DEOPT_MONITORS_HEADER_OPERANDS +
                         N * JITLOCK_DEOPT_MONITOR_PAIR_OPERANDS + 1]);
      KindsOk &= Kind == JITLOCK_RELOCK_HELD || Kind == JITLOCK_RELOCK_ELIDED;
    }
    if (KindsOk)
      return true;
  }
  return false;
}

/// Rebuilds `CB` with `Group` appended to its deopt bundle; every other
/// bundle, the attributes, the calling convention and the metadata stay.
void appendToDeoptBundle(CallBase &CB, ArrayRef<Value *> Group) {
  SmallVector<OperandBundleDef, 2> Bundles;
  CB.getOperandBundlesAsDefs(Bundles);
  for (OperandBundleDef &B : Bundles) {
    if (B.getTag() != "deopt")
      continue;
    std::vector<Value *> Inputs(B.input_begin(), B.input_end());
    Inputs.insert(Inputs.end(), Group.begin(), Group.end());
    B = OperandBundleDef("deopt", std::move(Inputs));
  }
  CallBase *New = CallBase::Create(&CB, Bundles, CB.getIterator());
  New->copyMetadata(CB);
  New->takeName(&CB);
  CB.replaceAllUsesWith(New);
  CB.eraseFromParent();
}

/// Describes the deopt points of `F`; returns whether any changed.
bool describeDeoptPoints(Function &F) {
  MonitorOps Ops(F);
  SmallVector<std::pair<CallBase *, MonitorList::State>, 8> Points;
  bool Any = false;
  for (const MonitorOps::Block &B : Ops.Blocks)
    Any |= any_of(B.Ops, [](const MonitorOp &O) {
      return O.Kind == MonitorOpKind::DeoptPoint;
    });
  if (!Any)
    return false;
  MonitorList Domain;
  MonitorDataflow<MonitorList> Flow(Ops, Domain);
  Flow.run();
  Flow.forEachOp([&](const MonitorOp &O, const MonitorList::State &S) {
    if (O.Kind == MonitorOpKind::DeoptPoint)
      Points.push_back({cast<CallBase>(O.I), S});
  });

  LLVMContext &Ctx = F.getContext();
  Type *I32 = Type::getInt32Ty(Ctx);
  DominatorTree DT(F);
  bool Changed = false;
  for (auto &[CB, S] : Points) {
    if (hasMonitorGroup(CB->getOperandBundle(LLVMContext::OB_deopt)->Inputs))
      continue;
    if (S.Unknown) {
      reportError(*CB, "the monitors held at this deopt point cannot be "
                       "known: the paths to it hold different monitors, or "
                       "an exit on one of them has no enter (unstructured "
                       "locking)");
      continue;
    }
    SmallVector<Value *, 8> Group{
        ConstantInt::get(I32, JITLOCK_DEOPT_MONITORS_MARKER),
        ConstantInt::get(I32, S.Held.size())};
    bool Available = true;
    for (unsigned Key : S.Held) {
      const MonitorKey &K = Ops.Keys[Key];
      // Held on every path to the point, the object was defined on each of
      // them; a value that still does not dominate the point (a phi's
      // operand, say) cannot be described.
      if (auto *Def = dyn_cast<Instruction>(K.Obj);
          Def && !DT.dominates(Def, CB)) {
        std::string Name;
        raw_string_ostream OS(Name);
        K.Obj->printAsOperand(OS, /*PrintType=*/false);
        reportError(*CB, "the monitor of " + Name +
                             " is held at this deopt point, but the object "
                             "is not available there");
        Available = false;
        break;
      }
      Group.push_back(const_cast<Value *>(K.Obj));
      Group.push_back(ConstantInt::get(I32, K.Elided ? JITLOCK_RELOCK_ELIDED
                                                     : JITLOCK_RELOCK_HELD));
    }
    if (!Available)
      continue;
    ++NumDeoptPoints;
    NumDeoptMonitors += S.Held.size();
    appendToDeoptBundle(*CB, Group);
    Changed = true;
  }
  return Changed;
}

} // namespace

bool eraseElidedMarkers(Module &M) {
  bool Erased = false;
  for (StringRef Name : {MonitorElidedEnterName, MonitorElidedExitName}) {
    Function *Marker = M.getFunction(Name);
    if (!Marker)
      continue;
    SmallVector<CallBase *, 8> Calls;
    for (User *U : Marker->users())
      if (auto *CB = dyn_cast<CallBase>(U);
          CB && CB->getCalledFunction() == Marker)
        Calls.push_back(CB);
    for (CallBase *CB : Calls) {
      // A marker never unwinds: an invoke goes on to its normal destination.
      if (auto *II = dyn_cast<InvokeInst>(CB))
        CB = changeToCall(II);
      CB->eraseFromParent();
      Erased = true;
    }
    if (Marker->use_empty())
      Marker->eraseFromParent();
  }
  return Erased;
}

PreservedAnalyses DeoptStatePass::run(Module &M, ModuleAnalysisManager &) {
  bool Changed = false;
  for (Function &F : M)
    if (!F.isDeclaration())
      Changed |= describeDeoptPoints(F);
  Changed |= eraseElidedMarkers(M);
  return Changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace jitlock
