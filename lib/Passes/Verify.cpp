//===- Verify.cpp - Diagnosing bad jitlock input --------------------------===//
//
// Bad input gets an error naming the function and the instruction, never a
// crash or a silent miscompile:
//   - a jitlock.* function with the wrong signature, or a call whose operand
//     is not a pointer;
//   - a jitlock.* function used other than as the callee of a direct call
//     (its address taken);
//   - an unknown jitlock.* name, or a definition of one;
//   - a jitlock.* name given to anything but a function (a global variable,
//     an alias, an ifunc): a call through it would jump into data;
//   - an exit with no matching enter on some path, in a function that enters
//     that object itself (structured locking);
//   - a monitor that may be held across a coroutine suspend point: the
//     coroutine may resume on another thread, whose lock stack does not hold
//     it.
//
// The structured-locking check is one sparse forward dataflow for all the
// objects of a function at once (HoldCounts, on the engine the passes share
// in MonitorDataflow.h), so that its cost grows with the number of monitor
// operations, not with their square. The elided markers jitlock-elide leaves
// are checked the same way, apart from the real monitors.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "MonitorDataflow.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>

#define DEBUG_TYPE "jitlock-verify"

using namespace llvm;

STATISTIC(NumErrors, "Number of jitlock input errors diagnosed");

namespace jitlock {

/// Whether `FT` is the contract's type of the jitlock function `Name`.
static bool isContractType(const FunctionType *FT, StringRef Name) {
  if (FT->isVarArg())
    return false;
  if (Name == MonitorEnterName || Name == MonitorExitName ||
      Name == MonitorElidedEnterName || Name == MonitorElidedExitName)
    return FT->getReturnType()->isVoidTy() && FT->getNumParams() == 1 &&
           FT->getParamType(0)->isPointerTy();
  // The thread is no managed object: a plain pointer.
  if (Name == ThreadName)
    return FT->getReturnType() == PointerType::getUnqual(FT->getContext()) &&
           FT->getNumParams() == 0;
  if (Name == SafepointPollName)
    return FT->getReturnType()->isVoidTy() && FT->getNumParams() == 0;
  return false;
}

bool isWellFormedCall(const CallBase &CB, StringRef Name) {
  const Function *F = CB.getCalledFunction();
  if (!F || F->getName() != Name)
    return false;
  FunctionType *FT = CB.getFunctionType();
  return FT == F->getFunctionType() && isContractType(FT, Name);
}

/// "file:line:column: " from a debug location (clang -g), as compilers
/// start a diagnostic; nothing without one.
static void printLocation(raw_ostream &OS, const DILocation *Loc) {
  if (!Loc || Loc->getFilename().empty())
    return;
  OS << Loc->getFilename() << ":" << Loc->getLine();
  if (Loc->getColumn())
    OS << ":" << Loc->getColumn();
  OS << ": ";
}

std::string describe(const Instruction &I, const Twine &What) {
  std::string Text;
  raw_string_ostream OS(Text);
  printLocation(OS, I.getDebugLoc().get());
  OS << "in function '" << I.getFunction()->getName() << "': " << What << ":";
  I.print(OS);
  return Text;
}

namespace {
/// An error or warning the jitlock passes report; printed as
/// "jitlock: <message>".
class JitlockDiagnostic : public DiagnosticInfo {
public:
  explicit JitlockDiagnostic(const Twine &Msg,
                             DiagnosticSeverity Severity = DS_Error)
      : DiagnosticInfo(kind(), Severity), Msg(Msg.str()) {}
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
  std::string Where;
  if (const DISubprogram *SP = F.getSubprogram();
      SP && !SP->getFilename().empty())
    Where = (SP->getFilename() + ":" + Twine(SP->getLine()) + ": ").str();
  reportError(F.getContext(),
              Where + "in function '" + F.getName() + "': " + What);
}

void reportWarning(const Instruction &I, const Twine &What) {
  I.getContext().diagnose(JitlockDiagnostic(describe(I, What), DS_Warning));
}

namespace {

/// Checks every call to a jitlock.* function against the contract.
void checkCalls(Function &Callee) {
  StringRef Name = Callee.getName();
  bool Known = Name == MonitorEnterName || Name == MonitorExitName ||
               Name == MonitorElidedEnterName ||
               Name == MonitorElidedExitName || Name == ThreadName ||
               Name == SafepointPollName;
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
  // A call is diagnosed above; a declaration nothing calls yet would be
  // called by the lowerings, which request the thread and place polls
  // through it.
  if (Known && Callee.use_empty() &&
      !isContractType(Callee.getFunctionType(), Name)) {
    std::string Declared;
    raw_string_ostream OS(Declared);
    Callee.getFunctionType()->print(OS);
    reportError(Callee.getContext(),
                "wrong signature: '" + Name + "' is declared as '" + Declared +
                    "', expected '" +
                    (Name == ThreadName          ? "ptr " + Name + "()"
                     : Name == SafepointPollName ? "void " + Name + "()"
                                                 : "void " + Name + "(ptr)") +
                    "'");
  }
}

/// A jitlock.* name on a global variable, an alias or an ifunc: no lowering
/// replaces a call through it, which would jump to its address.
void checkNotFunction(GlobalValue &GV) {
  StringRef Kind = isa<GlobalVariable>(GV) ? "a global variable"
                   : isa<GlobalAlias>(GV)  ? "an alias"
                                           : "an ifunc";
  std::string What = ("'" + GV.getName() + "' is " + Kind +
                      ", not a function declaration; jitlock.* names are "
                      "reserved for the functions the lowering replaces")
                         .str();
  bool AtInstruction = false;
  for (User *U : GV.users())
    if (auto *I = dyn_cast<Instruction>(U)) {
      reportError(*I, What);
      AtInstruction = true;
    }
  if (!AtInstruction)
    reportError(GV.getContext(), What);
}

/// The structured-locking check of one function: for each monitor the
/// function enters (MonitorOps' keys: each object, held and elided apart),
/// the least and the greatest number of holds on any path to each point. An
/// exit reached with no hold on some path (least 0) is diagnosed, and so is
/// a coroutine suspend point reached holding one on some path (greatest >
/// 0).
///
/// A state lists only the keys whose counts differ from (0, 0), so in
/// structured code it is as small as the nesting depth, and blocks without
/// monitor operations pass it on unchanged: the cost grows with the number
/// of operations and blocks, not with their product. The meet is (min, max)
/// per key, a key missing from a state counting (0, 0). The least count only
/// falls as the analysis proceeds and the greatest only rises. At the target
/// of a back-edge, a least count that the back-edges make fall goes to 0 at
/// once, and a greatest they make rise goes to Unbounded: that is where a
/// cycle that exits more than it enters (or enters more than it exits)
/// would take them one iteration at a time.
struct HoldCounts {
  static constexpr int Unbounded = INT_MAX / 2;
  struct Count {
    unsigned Key;
    int Min, Max;
    bool operator==(const Count &) const = default;
  };
  /// Sorted by Key; only keys with a count other than (0, 0).
  using State = SmallVector<Count, 4>;

  static void meet(State &Into, const State &Other);
  static Count countOf(const State &S, unsigned Key);
  void widen(State &In, const State &Forward, const State &Old);
  void apply(State &S, const MonitorOp &O);
};

void HoldCounts::meet(State &Into, const State &Other) {
  // Merge two sorted lists; a missing key counts (0, 0).
  State Merged;
  auto A = Into.begin(), AE = Into.end();
  auto B = Other.begin(), BE = Other.end();
  while (A != AE || B != BE) {
    Count C;
    if (B == BE || (A != AE && A->Key < B->Key)) {
      C = {A->Key, 0, A->Max};
      ++A;
    } else if (A == AE || B->Key < A->Key) {
      C = {B->Key, 0, B->Max};
      ++B;
    } else {
      C = {A->Key, std::min(A->Min, B->Min), std::max(A->Max, B->Max)};
      ++A;
      ++B;
    }
    if (C.Min != 0 || C.Max != 0)
      Merged.push_back(C);
  }
  Into = std::move(Merged);
}

HoldCounts::Count HoldCounts::countOf(const State &S, unsigned Key) {
  auto It = partition_point(S, [&](const Count &C) { return C.Key < Key; });
  return It != S.end() && It->Key == Key ? *It : Count{Key, 0, 0};
}

void HoldCounts::widen(State &In, const State &Forward, const State &Old) {
  // Only a change the back-edges bring about is widened: one the forward
  // predecessors bring about is exact already.
  auto Widened = [&](Count C) {
    Count Fwd = countOf(Forward, C.Key), Was = countOf(Old, C.Key);
    if (C.Min < Fwd.Min && C.Min < Was.Min)
      C.Min = 0;
    if (C.Max > Fwd.Max && C.Max > Was.Max)
      C.Max = Unbounded;
    return C;
  };
  State Result;
  // Every key that may have a count other than (0, 0) afterwards.
  SmallVector<unsigned, 8> Keys;
  for (const State *S : {static_cast<const State *>(&In), &Old})
    for (const Count &C : *S)
      Keys.push_back(C.Key);
  llvm::sort(Keys);
  Keys.erase(std::unique(Keys.begin(), Keys.end()), Keys.end());
  for (unsigned Key : Keys)
    if (Count C = Widened(countOf(In, Key)); C.Min != 0 || C.Max != 0)
      Result.push_back(C);
  In = std::move(Result);
}

void HoldCounts::apply(State &S, const MonitorOp &O) {
  if (!O.isEnter() && !O.isExit())
    return;
  int Delta = O.isEnter() ? 1 : -1;
  auto It = partition_point(S, [&](const Count &C) { return C.Key < O.Key; });
  if (It == S.end() || It->Key != O.Key)
    It = S.insert(It, {O.Key, 0, 0});
  // No count goes below zero: an exit too many is diagnosed, and the
  // runtime refuses it without changing the lock.
  It->Min = std::max(It->Min + Delta, 0);
  if (It->Max != Unbounded)
    It->Max = std::clamp(It->Max + Delta, 0, Unbounded - 1);
  if (It->Min == 0 && It->Max == 0)
    S.erase(It);
}

void checkStructuredLocking(Function &F) {
  MonitorOps Ops(F);
  if (!Ops.hasMonitors())
    return;
  HoldCounts Counts;
  MonitorDataflow<HoldCounts> Flow(Ops, Counts);
  Flow.run();
  Flow.forEachOp([&](const MonitorOp &O, const HoldCounts::State &S) {
    if (O.isExit()) {
      if (HoldCounts::countOf(S, O.Key).Min <= 0)
        reportError(*O.I, "monitor exit without a matching enter on some "
                          "path");
    } else if (O.Kind == MonitorOpKind::Suspend) {
      for (const HoldCounts::Count &C : S)
        if (C.Max > 0) {
          std::string Object;
          raw_string_ostream OS(Object);
          Ops.Keys[C.Key].Obj->printAsOperand(OS, /*PrintType=*/false);
          reportError(*O.I, "the monitor of " + Object +
                                " may be held across this coroutine "
                                "suspend point, and the coroutine may "
                                "resume on a thread that does not hold it");
        }
    }
  });
}

} // namespace

PreservedAnalyses VerifyPass::run(Module &M, ModuleAnalysisManager &) {
  for (GlobalValue &GV : M.global_values()) {
    if (!GV.getName().starts_with("jitlock."))
      continue;
    if (auto *F = dyn_cast<Function>(&GV))
      checkCalls(*F);
    else
      checkNotFunction(GV);
  }
  for (Function &F : M)
    if (!F.isDeclaration())
      checkStructuredLocking(F);
  return PreservedAnalyses::all();
}

} // namespace jitlock
