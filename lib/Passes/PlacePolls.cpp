//===- PlacePolls.cpp - Place safepoint polls (polls=auto) ----------------===//
//
// Places safepoint polls (jitlock.safepoint.poll()) in managed code, for
// polls=auto, so that a thread reaches one in bounded time: a JIT then need
// not place them itself. jitlock-lower-safepoints lowers them afterwards,
// with the frontend's. The rule:
//
//   * A call *may poll* unless its callee is an LLVM intrinsic, inline asm,
//     or a jitlock.* or jitlock_rt_* function other than the polls
//     (jitlock.safepoint.poll, jitlock_rt_safepoint_poll). Every other
//     callee, indirect ones included, is taken to be managed code lowered by
//     this same rule, so it reaches a poll in bounded time: one of its loops'
//     or the one at its return. The runtime's entry points do not count, even
//     those that sometimes stop at a safepoint (a contended enter): they do
//     not poll on every call.
//   * A block *polls* when it holds a poll or a call that may poll. A block
//     is straight-line code, so a cycle through it runs all of it: a cycle
//     polls if it passes through a block that polls.
//   * Back-edges are the edges to a block on the stack of a depth-first
//     search of the CFG from the entry block; every cycle that can run has
//     one, natural loop or not (irreducible flow included). For each
//     back-edge U -> H, inner ones first (H deeper in the search first), a
//     poll goes before U's terminator unless every path from H to U passes
//     through a block that polls, polls placed so far included. Then every
//     cycle passes a poll.
//   * Every `ret` gets a poll before it, unless the instruction before it is
//     a call that may poll: that callee polled at its own return, and the
//     call stays a tail call.
//
// So for nested loops: an inner loop whose body polls, and which runs at
// least once on every way around the outer loop (a do-while), makes the
// outer back-edge's poll unnecessary; an inner loop the outer iteration can
// skip (zero trips) does not, and the outer back-edge gets its own poll.
// The pass marks each function it placed polls in ("jitlock-polls-placed")
// and leaves marked ones alone, so running it (or the lowering) again on its
// output adds nothing.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

#define DEBUG_TYPE "jitlock-place-polls"

using namespace llvm;

STATISTIC(NumBackEdgePolls, "Polls placed on loop back-edges (polls=auto)");
STATISTIC(NumBackEdgesPolling,
          "Loop back-edges left without a poll: every iteration polls "
          "already (polls=auto)");
STATISTIC(NumReturnPolls, "Polls placed before returns (polls=auto)");
STATISTIC(NumReturnsPolling,
          "Returns left without a poll: right after a call that may poll "
          "(polls=auto)");

namespace jitlock {
namespace {

/// "%name", or "%3" for an unnamed block.
std::string blockName(const BasicBlock &BB) {
  std::string Text;
  raw_string_ostream OS(Text);
  BB.printAsOperand(OS, /*PrintType=*/false);
  return Text;
}

/// Places polls in one function by the polls=auto rule.
class PollPlacer {
public:
  PollPlacer(Function &F, FunctionCallee Poll) : F(F), Poll(Poll), ORE(&F) {
    for (BasicBlock &BB : F) {
      auto It = find_if(BB, [](const Instruction &I) { return mayPoll(I); });
      FirstPoll[&BB] = It == BB.end() ? nullptr : &*It;
    }
  }

  void placeOnBackEdges();
  void placeAtReturns();

private:
  struct BackEdge {
    BasicBlock *From, *To;
  };
  /// The back-edges of a depth-first search from the entry block, inner
  /// ones first.
  SmallVector<BackEdge, 8> findBackEdges();
  /// Whether some path from `H` to `U` passes through no block that polls.
  /// If none does, `Stoppers` gets the first poll of each block that stops
  /// the search.
  bool reachesWithoutPoll(BasicBlock *H, BasicBlock *U,
                          SmallSetVector<Instruction *, 4> &Stoppers);
  /// Places a poll before `Before`, which then starts its block's polling.
  void insertPoll(Instruction *Before);
  /// Places a poll before `Before` (insertPoll) and says so in remark
  /// `Remark` at `At`; `Where` is "before the return in %b" and the like.
  void placePoll(Instruction *Before, StringRef Remark, Instruction *At,
                 const std::string &Where);
  /// Says in remark `Remark` of kind `RemarkT` at `At` that no poll was
  /// placed `Where`, because `Why`.
  template <typename RemarkT>
  void remarkNotPlaced(StringRef Remark, Instruction *At,
                       const std::string &Where, const std::string &Why) {
    ORE.emit([&] {
      return RemarkT("jitlock", Remark, At)
             << "no poll placed in '" << F.getName() << "' " << Where << ": "
             << Why;
    });
  }
  /// "a call to @g in %body", for the remarks.
  std::string describePoll(const Instruction &I) const;

  Function &F;
  FunctionCallee Poll;
  OptimizationRemarkEmitter ORE;
  FuncletColors Funclets;
  DenseMap<const BasicBlock *, Instruction *> FirstPoll;
  SmallPtrSet<const Instruction *, 8> Placed;
};

SmallVector<PollPlacer::BackEdge, 8> PollPlacer::findBackEdges() {
  DenseMap<BasicBlock *, unsigned> Preorder;
  SmallPtrSet<BasicBlock *, 16> OnStack;
  SmallSetVector<std::pair<BasicBlock *, BasicBlock *>, 8> Edges;
  SmallVector<std::pair<BasicBlock *, succ_iterator>, 16> Stack;
  auto Push = [&](BasicBlock *BB) {
    Preorder[BB] = Preorder.size();
    OnStack.insert(BB);
    Stack.push_back({BB, succ_begin(BB)});
  };
  Push(&F.getEntryBlock());
  while (!Stack.empty()) {
    BasicBlock *BB = Stack.back().first;
    succ_iterator &Next = Stack.back().second;
    if (Next == succ_end(BB)) {
      OnStack.erase(BB);
      Stack.pop_back();
      continue;
    }
    BasicBlock *Succ = *Next++;
    if (!Preorder.count(Succ))
      Push(Succ);
    else if (OnStack.count(Succ))
      Edges.insert({BB, Succ});
  }

  SmallVector<BackEdge, 8> Result;
  for (auto [From, To] : Edges)
    Result.push_back({From, To});
  // An inner loop's header is reached later in the search than the outer
  // loop's: handling it first lets a poll in the inner loop serve both. The
  // order is total (the edges are distinct): every run places the same
  // polls.
  llvm::sort(Result, [&](const BackEdge &A, const BackEdge &B) {
    if (A.To != B.To)
      return Preorder[A.To] > Preorder[B.To];
    return Preorder[A.From] < Preorder[B.From];
  });
  return Result;
}

bool PollPlacer::reachesWithoutPoll(
    BasicBlock *H, BasicBlock *U, SmallSetVector<Instruction *, 4> &Stoppers) {
  SmallPtrSet<BasicBlock *, 32> Visited;
  SmallVector<BasicBlock *, 32> Work;
  // Whether `BB` is U, reached without a poll.
  auto Visit = [&](BasicBlock *BB) {
    if (!Visited.insert(BB).second)
      return false;
    if (Instruction *P = FirstPoll.lookup(BB)) {
      Stoppers.insert(P);
      return false;
    }
    Work.push_back(BB);
    return BB == U;
  };
  if (Visit(H))
    return true;
  while (!Work.empty())
    for (BasicBlock *Succ : successors(Work.pop_back_val()))
      if (Visit(Succ))
        return true;
  return false;
}

void PollPlacer::insertPoll(Instruction *Before) {
  // The builder gives the poll `Before`'s debug location.
  IRBuilder<> B(Before);
  CallInst *CI = createCallIn(B, Poll, {}, Funclets.padOf(*Before));
  Placed.insert(CI);
  Instruction *&First = FirstPoll[CI->getParent()];
  if (!First || CI->comesBefore(First))
    First = CI;
}

std::string PollPlacer::describePoll(const Instruction &I) const {
  std::string Text;
  raw_string_ostream OS(Text);
  const Function *Callee = cast<CallBase>(I).getCalledFunction();
  if (Placed.count(&I))
    OS << "the poll placed";
  else if (Callee && Callee->getName() == SafepointPollName)
    OS << "a safepoint poll";
  else if (Callee)
    OS << "a call to @" << Callee->getName();
  else
    OS << "an indirect call";
  OS << " in " << blockName(*I.getParent());
  return Text;
}

void PollPlacer::placeOnBackEdges() {
  for (auto [U, H] : findBackEdges()) {
    Instruction *Term = U->getTerminator();
    std::string Where =
        "on the loop back-edge from " + blockName(*U) + " to " + blockName(*H);
    SmallSetVector<Instruction *, 4> Stoppers;
    if (!reachesWithoutPoll(H, U, Stoppers)) {
      ++NumBackEdgesPolling;
      std::string Why = "every iteration polls already (";
      for (auto [I, P] : enumerate(Stoppers))
        Why += (I ? ", " : "") + describePoll(*P);
      remarkNotPlaced<OptimizationRemarkAnalysis>("BackEdgePolls", Term, Where,
                                                  Why + ")");
      continue;
    }
    // A block that cannot hold a call (a catchswitch) gets it at the top of
    // the loop instead.
    Instruction *Before = Term;
    if (U->getFirstInsertionPt() == U->end())
      Before = H->getFirstInsertionPt() == H->end()
                   ? nullptr
                   : &*H->getFirstInsertionPt();
    if (!Before) {
      remarkNotPlaced<OptimizationRemarkMissed>(
          "NoPollPlace", Term, Where, "neither block can hold a call");
      continue;
    }
    ++NumBackEdgePolls;
    placePoll(Before, "BackEdgePoll", Term, Where);
  }
}

void PollPlacer::placeAtReturns() {
  for (BasicBlock &BB : F) {
    auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator());
    if (!Ret)
      continue;
    std::string Where = "before the return in " + blockName(BB);
    // Nothing may come between a musttail call and its return: the poll
    // goes before the call, unless the call polls.
    Instruction *Before = Ret;
    Instruction *Prev = Ret->getPrevNonDebugInstruction();
    if (CallInst *MustTail = BB.getTerminatingMustTailCall())
      Before = Prev = MustTail;
    if (Prev && mayPoll(*Prev)) {
      ++NumReturnsPolling;
      remarkNotPlaced<OptimizationRemarkAnalysis>(
          "ReturnPolls", Ret, Where, "it follows " + describePoll(*Prev));
      continue;
    }
    ++NumReturnPolls;
    placePoll(Before, "ReturnPoll", Ret, Where);
  }
}

void PollPlacer::placePoll(Instruction *Before, StringRef Remark,
                           Instruction *At, const std::string &Where) {
  insertPoll(Before);
  ORE.emit([&] {
    return OptimizationRemark("jitlock", Remark, At)
           << "safepoint poll placed in '" << F.getName() << "' " << Where;
  });
}

/// The rule for every function of `M` not placed already.
void placePolls(Module &M, const ResolvedConfig &C) {
  FunctionType *PollTy = FunctionType::get(Type::getVoidTy(M.getContext()),
                                           /*isVarArg=*/false);
  // A declaration with another type was diagnosed by jitlock-verify.
  if (Function *Existing = M.getFunction(SafepointPollName);
      Existing && Existing->getFunctionType() != PollTy)
    return;
  FunctionCallee Poll = M.getOrInsertFunction(SafepointPollName, PollTy);
  for (Function &F : M) {
    // The layout check runs before any managed code: it needs no poll.
    if (F.isDeclaration() || F.hasFnAttribute(PollsPlacedAttr) ||
        F.getName() == LayoutCheckName)
      continue;
    if (F.hasFnAttribute(Attribute::Naked)) {
      OptimizationRemarkEmitter ORE(&F);
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "NakedFunction", &F)
               << "no polls placed in naked function '" << F.getName() << "'";
      });
      continue;
    }
    if (C.Thread == ThreadMode::Arg)
      if (const char *Problem = threadParameterProblem(F)) {
        reportError(F, Twine("polls=auto needs the thread: ") + Problem);
        continue;
      }
    LLVM_DEBUG(dbgs() << "jitlock: placing polls in " << F.getName() << "\n");
    PollPlacer Placer(F, Poll);
    Placer.placeOnBackEdges();
    Placer.placeAtReturns();
    F.addFnAttr(PollsPlacedAttr);
  }
  if (auto *Fn = dyn_cast<Function>(Poll.getCallee()); Fn && Fn->use_empty())
    Fn->eraseFromParent();
}

} // namespace

PreservedAnalyses PlacePollsPass::run(Module &M, ModuleAnalysisManager &MAM) {
  // polls=auto may come from the configuration or from a module flag.
  if (Only == Scope::AutoOnly && Config.Polls != PollMode::Auto &&
      !M.getModuleFlag("jitlock.polls"))
    return PreservedAnalyses::all();
  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved ||
      (Only == Scope::AutoOnly && Resolved->Polls != PollMode::Auto))
    return PreservedAnalyses::all();
  placePolls(M, *Resolved);
  return preservedByLowering();
}

/// The first item of the rule at the top of this file.
bool mayPoll(const Instruction &I) {
  const auto *CB = dyn_cast<CallBase>(&I);
  if (!CB || CB->isInlineAsm())
    return false;
  const Function *Callee = CB->getCalledFunction();
  if (!Callee)
    return true;
  StringRef Name = Callee->getName();
  if (Name == SafepointPollName || Name == RuntimePollName)
    return true;
  if (Callee->isIntrinsic())
    return false;
  return !Name.starts_with("jitlock.") && !Name.starts_with("jitlock_rt_");
}

} // namespace jitlock
