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
// objects of a function at once (see StructuredCheck), so that its cost
// grows with the number of monitor operations, not with their square.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <queue>

#define DEBUG_TYPE "jitlock-verify"

using namespace llvm;

STATISTIC(NumErrors, "Number of jitlock input errors diagnosed");

namespace jitlock {

/// Whether `FT` is the contract's type of the jitlock function `Name`.
static bool isContractType(const FunctionType *FT, StringRef Name) {
  if (FT->isVarArg())
    return false;
  if (Name == MonitorEnterName || Name == MonitorExitName)
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

std::string describe(const Instruction &I, const Twine &What) {
  std::string Text;
  raw_string_ostream OS(Text);
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
  reportError(F.getContext(), "in function '" + F.getName() + "': " + What);
}

void reportWarning(const Instruction &I, const Twine &What) {
  I.getContext().diagnose(JitlockDiagnostic(describe(I, What), DS_Warning));
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

/// The object a monitor call locks, with casts looked through.
const Value *lockedObject(const CallBase &CB) {
  return CB.getArgOperand(0)->stripPointerCasts();
}

/// The structured-locking check of one function: for each object the
/// function enters, the least and the greatest number of holds on any path
/// to each point. An exit reached with no hold on some path (least 0) is
/// diagnosed, and so is a coroutine suspend point reached holding one on
/// some path (greatest > 0).
///
/// One forward dataflow carries every object at once. A block's state lists
/// only the objects whose counts differ from (0, 0), so in structured code
/// it is as small as the nesting depth, and blocks without monitor
/// operations pass it on unchanged: the cost grows with the number of
/// operations and blocks, not with their product. The meet is (min, max)
/// per object, an object missing from a state counting (0, 0). The least
/// count only falls as the analysis proceeds and the greatest only rises. At
/// the target of a back-edge, a least count that the back-edges make fall
/// goes to 0 at once, and a greatest they make rise goes to Unbounded:
/// that is where a cycle that exits more than it enters (or enters more than
/// it exits) would take them one iteration at a time.
///
/// An invoke of a jitlock function never unwinds (the lowering turns it into
/// a call), so its unwind edge carries nothing: javac's shape, whose handler
/// exits the monitor in an invoke that unwinds to the handler itself, is
/// structured.
class StructuredCheck {
public:
  explicit StructuredCheck(Function &F) : F(F) {}
  void run();

private:
  static constexpr int Unbounded = INT_MAX / 2;
  struct Count {
    unsigned Obj;
    int Min, Max;
    bool operator==(const Count &) const = default;
  };
  /// Sorted by Obj; only objects with a count other than (0, 0).
  using State = SmallVector<Count, 4>;
  /// A monitor operation (Delta +1 or -1) or a suspend point (Delta 0).
  struct Op {
    const Instruction *I;
    unsigned Obj;
    int Delta;
  };
  struct BlockInfo {
    SmallVector<Op, 2> Ops;
    /// The state at the end; none while the block has not been reached.
    std::optional<State> Out;
    /// The state at the start, kept for back-edge targets only (widening
    /// compares with it); the others recompute it from their predecessors.
    std::optional<State> In;
    bool BackEdgeTarget = false;
  };

  void collect();
  /// The meet of the states the predecessors of block `N` pass to it (only
  /// those before it in reverse post-order with `ForwardOnly`); none when
  /// no predecessor has been reached.
  std::optional<State> meetPredecessors(unsigned N, bool ForwardOnly);
  /// Whether the edge from `Pred` to `BB` can be taken after lowering.
  static bool isRealEdge(const BasicBlock *Pred, const BasicBlock *BB);
  static void meet(State &Into, const State &Other);
  static Count countOf(const State &S, unsigned Obj);
  /// Widens the new state `In` of a back-edge target whose forward
  /// predecessors pass `Forward` and whose state was `Old`.
  static void widen(State &In, const State &Forward, const State &Old);
  static void apply(State &S, const Op &O);
  void report();

  Function &F;
  SmallVector<BasicBlock *, 32> Order;
  DenseMap<const BasicBlock *, unsigned> Index;
  SmallVector<BlockInfo, 32> Blocks;
  SmallVector<const Value *, 16> Objects;
};

void StructuredCheck::collect() {
  for (BasicBlock *BB : ReversePostOrderTraversal<Function *>(&F)) {
    Index[BB] = Order.size();
    Order.push_back(BB);
  }
  Blocks.resize(Order.size());
  // Only the objects the function enters are checked: an exit-only function
  // releases what its caller took.
  DenseMap<const Value *, unsigned> ObjectIndex;
  for (BasicBlock *BB : Order)
    for (Instruction &I : *BB)
      if (auto *CB = dyn_cast<CallBase>(&I);
          CB && isWellFormedCall(*CB, MonitorEnterName))
        if (ObjectIndex.try_emplace(lockedObject(*CB), Objects.size()).second)
          Objects.push_back(lockedObject(*CB));
  for (auto [N, BB] : enumerate(Order)) {
    BlockInfo &Info = Blocks[N];
    for (Instruction &I : *BB) {
      if (isCoroutineSuspend(I)) {
        Info.Ops.push_back({&I, 0, 0});
        continue;
      }
      auto *CB = dyn_cast<CallBase>(&I);
      if (!CB)
        continue;
      bool Enter = isWellFormedCall(*CB, MonitorEnterName);
      if (!Enter && !isWellFormedCall(*CB, MonitorExitName))
        continue;
      auto It = ObjectIndex.find(lockedObject(*CB));
      if (It != ObjectIndex.end())
        Info.Ops.push_back({&I, It->second, Enter ? 1 : -1});
    }
    for (const BasicBlock *Pred : predecessors(BB)) {
      auto It = Index.find(Pred);
      if (It != Index.end() && It->second >= N)
        Info.BackEdgeTarget = true;
    }
  }
}

bool StructuredCheck::isRealEdge(const BasicBlock *Pred, const BasicBlock *BB) {
  auto *II = dyn_cast<InvokeInst>(Pred->getTerminator());
  return !II || II->getUnwindDest() != BB || II->getNormalDest() == BB ||
         !isJitlockCall(*II);
}

void StructuredCheck::meet(State &Into, const State &Other) {
  // Merge two sorted lists; a missing object counts (0, 0).
  State Merged;
  auto A = Into.begin(), AE = Into.end();
  auto B = Other.begin(), BE = Other.end();
  while (A != AE || B != BE) {
    Count C;
    if (B == BE || (A != AE && A->Obj < B->Obj)) {
      C = {A->Obj, 0, A->Max};
      ++A;
    } else if (A == AE || B->Obj < A->Obj) {
      C = {B->Obj, 0, B->Max};
      ++B;
    } else {
      C = {A->Obj, std::min(A->Min, B->Min), std::max(A->Max, B->Max)};
      ++A;
      ++B;
    }
    if (C.Min != 0 || C.Max != 0)
      Merged.push_back(C);
  }
  Into = std::move(Merged);
}

StructuredCheck::Count StructuredCheck::countOf(const State &S, unsigned Obj) {
  auto It = partition_point(S, [&](const Count &C) { return C.Obj < Obj; });
  return It != S.end() && It->Obj == Obj ? *It : Count{Obj, 0, 0};
}

std::optional<StructuredCheck::State>
StructuredCheck::meetPredecessors(unsigned N, bool ForwardOnly) {
  const BasicBlock *BB = Order[N];
  if (BB->isEntryBlock())
    return State();
  std::optional<State> Met;
  for (const BasicBlock *Pred : predecessors(BB)) {
    // A predecessor unreachable from the entry contributes nothing.
    auto It = Index.find(Pred);
    if (It == Index.end() || !Blocks[It->second].Out ||
        (ForwardOnly && It->second >= N) || !isRealEdge(Pred, BB))
      continue;
    const State &Out = *Blocks[It->second].Out;
    if (Met)
      meet(*Met, Out);
    else
      Met = Out;
  }
  return Met;
}

void StructuredCheck::widen(State &In, const State &Forward, const State &Old) {
  // Only a change the back-edges bring about is widened: one the forward
  // predecessors bring about is exact already.
  auto Widened = [&](Count C) {
    Count Fwd = countOf(Forward, C.Obj), Was = countOf(Old, C.Obj);
    if (C.Min < Fwd.Min && C.Min < Was.Min)
      C.Min = 0;
    if (C.Max > Fwd.Max && C.Max > Was.Max)
      C.Max = Unbounded;
    return C;
  };
  State Result;
  // Every object that may have a count other than (0, 0) afterwards.
  SmallVector<unsigned, 8> Objs;
  for (const State *S : {static_cast<const State *>(&In), &Old})
    for (const Count &C : *S)
      Objs.push_back(C.Obj);
  llvm::sort(Objs);
  Objs.erase(std::unique(Objs.begin(), Objs.end()), Objs.end());
  for (unsigned Obj : Objs)
    if (Count C = Widened(countOf(In, Obj)); C.Min != 0 || C.Max != 0)
      Result.push_back(C);
  In = std::move(Result);
}

void StructuredCheck::apply(State &S, const Op &O) {
  if (O.Delta == 0)
    return;
  auto It = partition_point(S, [&](const Count &C) { return C.Obj < O.Obj; });
  if (It == S.end() || It->Obj != O.Obj)
    It = S.insert(It, {O.Obj, 0, 0});
  // No count goes below zero: an exit too many is diagnosed, and the
  // runtime refuses it without changing the lock.
  It->Min = std::max(It->Min + O.Delta, 0);
  if (It->Max != Unbounded)
    It->Max = std::clamp(It->Max + O.Delta, 0, Unbounded - 1);
  if (It->Min == 0 && It->Max == 0)
    S.erase(It);
}

void StructuredCheck::run() {
  collect();
  if (Objects.empty())
    return;
  // Lowest RPO index first, so that a block is first computed after all of
  // its forward predecessors.
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
      Work;
  BitVector Queued(Order.size(), true);
  for (unsigned N = 0; N != Order.size(); ++N)
    Work.push(N);
  while (!Work.empty()) {
    unsigned N = Work.top();
    Work.pop();
    Queued.reset(N);
    BlockInfo &Info = Blocks[N];
    std::optional<State> In = meetPredecessors(N, /*ForwardOnly=*/false);
    if (!In)
      continue;
    if (Info.BackEdgeTarget) {
      if (Info.In)
        widen(*In, meetPredecessors(N, /*ForwardOnly=*/true).value_or(State()),
              *Info.In);
      Info.In = In;
    }
    State Out = std::move(*In);
    for (const Op &O : Info.Ops)
      apply(Out, O);
    if (Info.Out && Out == *Info.Out)
      continue;
    Info.Out = std::move(Out);
    for (const BasicBlock *Succ : successors(Order[N])) {
      unsigned S = Index.lookup(Succ);
      if (!Queued.test(S)) {
        Queued.set(S);
        Work.push(S);
      }
    }
  }
  report();
}

void StructuredCheck::report() {
  for (auto [N, BB] : enumerate(Order)) {
    const BlockInfo &Info = Blocks[N];
    if (!Info.Out)
      continue; // Unreachable once lowered.
    State S = Info.BackEdgeTarget ? *Info.In
                                  : *meetPredecessors(N, /*ForwardOnly=*/false);
    for (const Op &O : Info.Ops) {
      if (O.Delta < 0) {
        auto It =
            partition_point(S, [&](const Count &C) { return C.Obj < O.Obj; });
        if (It == S.end() || It->Obj != O.Obj || It->Min <= 0)
          reportError(*O.I, "monitor exit without a matching enter on some "
                            "path");
      } else if (O.Delta == 0) {
        for (const Count &C : S)
          if (C.Max > 0) {
            std::string Object;
            raw_string_ostream OS(Object);
            Objects[C.Obj]->printAsOperand(OS, /*PrintType=*/false);
            reportError(*O.I, "the monitor of " + Object +
                                  " may be held across this coroutine "
                                  "suspend point, and the coroutine may "
                                  "resume on a thread that does not hold it");
          }
      }
      apply(S, O);
    }
  }
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
      StructuredCheck(F).run();
  return PreservedAnalyses::all();
}

} // namespace jitlock
