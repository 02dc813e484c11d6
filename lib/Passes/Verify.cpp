//===- Verify.cpp - Diagnosing bad jitlock input --------------------------===//
//
// Bad input gets an error naming the function and the instruction, never a
// crash or a silent miscompile:
//   - a jitlock.* function with the wrong signature, or a call whose operand
//     is not a pointer;
//   - a jitlock.* function used other than as the callee of a direct call
//     (its address taken);
//   - an unknown jitlock.* name, or a definition of one;
//   - an exit with no matching enter on some path, in a function that enters
//     that object itself (structured locking).
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>

#define DEBUG_TYPE "jitlock-verify"

using namespace llvm;

STATISTIC(NumErrors, "Number of jitlock input errors diagnosed");

namespace jitlock {

bool isWellFormedCall(const CallBase &CB, StringRef Name) {
  const Function *F = CB.getCalledFunction();
  if (!F || F->getName() != Name)
    return false;
  FunctionType *FT = CB.getFunctionType();
  if (FT != F->getFunctionType() || FT->isVarArg())
    return false;
  if (Name == MonitorEnterName || Name == MonitorExitName)
    return FT->getReturnType()->isVoidTy() && FT->getNumParams() == 1 &&
           FT->getParamType(0)->isPointerTy();
  if (Name == ThreadName)
    return FT->getReturnType()->isPointerTy() && FT->getNumParams() == 0;
  if (Name == SafepointPollName)
    return FT->getReturnType()->isVoidTy() && FT->getNumParams() == 0;
  return false;
}

std::string describe(const Instruction &I, const Twine &What) {
  std::string Text;
  raw_string_ostream OS(Text);
  OS << "in function '" << I.getFunction()->getName() << "': " << What << ":";
  I.print(OS);
  return Text;
}

namespace {
/// An error the jitlock passes report; printed as "jitlock: <message>".
class JitlockDiagnostic : public DiagnosticInfo {
public:
  explicit JitlockDiagnostic(const Twine &Msg)
      : DiagnosticInfo(kind(), DS_Error), Msg(Msg.str()) {}
  void print(DiagnosticPrinter &DP) const override { DP << "jitlock: " << Msg; }
  static int kind() {
    static int Kind = getNextAvailablePluginDiagnosticKind();
    return Kind;
  }

private:
  std::string Msg;
};
} // namespace

void reportError(LLVMContext &Ctx, const Twine &What) {
  ++NumErrors;
  Ctx.diagnose(JitlockDiagnostic(What));
}

void reportError(const Instruction &I, const Twine &What) {
  reportError(I.getContext(), describe(I, What));
}

void reportError(const Function &F, const Twine &What) {
  reportError(F.getContext(), "in function '" + F.getName() + "': " + What);
}

namespace {

/// Checks every call to a jitlock.* function against the contract.
void checkCalls(Function &Callee) {
  StringRef Name = Callee.getName();
  bool Known = Name == MonitorEnterName || Name == MonitorExitName ||
               Name == ThreadName || Name == SafepointPollName;
  for (Use &Use : Callee.uses()) {
    User *U = Use.getUser();
    auto *CB = dyn_cast<CallBase>(U);
    if (!CB || !CB->isCallee(&Use)) {
      // Nothing can lower an indirect call to these.
      if (auto *I = dyn_cast<Instruction>(U))
        reportError(*I, "the address of '" + Name +
                            "' is taken; jitlock "
                            "functions may only be called directly");
      else
        reportError(Callee.getContext(),
                    "the address of '" + Name +
                        "' is taken; jitlock "
                        "functions may only be called directly");
      continue;
    }
    if (!Known)
      reportError(*CB, "unknown jitlock function '" + Name + "'");
    else if (!isWellFormedCall(*CB, Name))
      reportError(*CB, Name == ThreadName
                           ? "wrong signature: expected 'ptr " + Name + "()'"
                       : Name == SafepointPollName
                           ? "wrong signature: expected 'void " + Name + "()'"
                           : "wrong signature or non-pointer operand: "
                             "expected 'void " +
                                 Name + "(ptr)'");
  }
  if (!Callee.isDeclaration())
    reportError(Callee.getContext(),
                "'" + Name + "' must be declared, not defined");
}

/// The object a monitor call locks, with casts looked through.
const Value *lockedObject(const CallBase &CB) {
  return CB.getArgOperand(0)->stripPointerCasts();
}

/// For each object that the function both enters and exits, computes the
/// least number of holds on any path to each exit; an exit reached with none
/// on some path is diagnosed. A forward "minimum held" dataflow: the meet is
/// min, enter adds one, exit subtracts one, clamped to [-1, Cap] so that
/// loops reach a fixed point.
void checkStructured(Function &F) {
  constexpr int Cap = 64, Unknown = INT_MAX;
  SmallVector<const CallBase *, 8> Ops;
  SmallVector<const Value *, 4> Entered;
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I)) {
      bool Enter = isWellFormedCall(*CB, MonitorEnterName);
      if (Enter || isWellFormedCall(*CB, MonitorExitName))
        Ops.push_back(CB);
      if (Enter && !is_contained(Entered, lockedObject(*CB)))
        Entered.push_back(lockedObject(*CB));
    }
  ReversePostOrderTraversal<Function *> RPO(&F);
  for (const Value *Obj : Entered) {
    auto Step = [&](const Instruction &I, int Held) {
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB || !is_contained(Ops, CB) || lockedObject(*CB) != Obj)
        return Held;
      bool Enter = CB->getCalledFunction()->getName() == MonitorEnterName;
      return std::clamp(Held + (Enter ? 1 : -1), -1, Cap);
    };
    DenseMap<const BasicBlock *, int> In;
    for (BasicBlock *BB : RPO)
      In[BB] = BB->isEntryBlock() ? 0 : Unknown;
    for (bool Changed = true; Changed;) {
      Changed = false;
      for (BasicBlock *BB : RPO) {
        int Held = BB->isEntryBlock() ? 0 : Unknown;
        for (BasicBlock *Pred : predecessors(BB)) {
          // A predecessor unreachable from the entry contributes nothing.
          auto It = In.find(Pred);
          int Out = It == In.end() ? Unknown : It->second;
          if (Out != Unknown)
            for (Instruction &I : *Pred)
              Out = Step(I, Out);
          Held = std::min(Held, Out);
        }
        if (BB->isEntryBlock())
          Held = 0;
        if (Held != In[BB]) {
          In[BB] = Held;
          Changed = true;
        }
      }
    }
    for (BasicBlock *BB : RPO) {
      int Held = In[BB];
      if (Held == Unknown)
        continue; // Unreachable.
      for (Instruction &I : *BB) {
        auto *CB = dyn_cast<CallBase>(&I);
        if (CB && is_contained(Ops, CB) && lockedObject(*CB) == Obj &&
            CB->getCalledFunction()->getName() == MonitorExitName && Held <= 0)
          reportError(I, "monitor exit without a matching enter on some "
                         "path");
        Held = Step(I, Held);
      }
    }
  }
}

} // namespace

PreservedAnalyses VerifyPass::run(Module &M, ModuleAnalysisManager &) {
  for (Function &F : M)
    if (F.getName().starts_with("jitlock."))
      checkCalls(F);
  for (Function &F : M)
    if (!F.isDeclaration())
      checkStructured(F);
  return PreservedAnalyses::all();
}

} // namespace jitlock
