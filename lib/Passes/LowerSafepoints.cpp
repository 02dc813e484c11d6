//===- LowerSafepoints.cpp - Inline safepoint polls -----------------------===//
//
// Replaces each jitlock.safepoint.poll() with the inline poll of the
// protocol stated at the top of lib/Runtime/Safepoint.cpp; P1 and P2 below
// are that comment's labels:
//
//   P1  load the byte of the poll word (thread + poll_word_offset) that holds
//       poll_armed_bit; if the bit is set (unlikely), call P2
//   P2  jitlock_rt_safepoint_poll(thread), in a cold block out of line; it
//       re-reads the word itself, then the code continues after the poll
//
// With the thread in a register that is `testb $1, off(%reg)` + `jne` on
// x86_64 and `ldrb` + `tbnz` on AArch64 (docs/fast-paths.md).
//
// The load is volatile, not atomic: a poll must really read the word each
// time it runs, and a racing volatile load reads what is in memory (its
// result is target-defined, LangRef's memory model), so it is as good as a
// relaxed atomic one here. But x86 does not fold an atomic load into `test`
// (a monotonic one costs a `movzbl` more) and does fold a volatile one.
// Nothing but the armed bit is read: P2 re-reads the word and decides.
//
// polls=none removes every poll; polls=explicit (the default) lowers the
// frontend's; polls=auto first places more, by this rule:
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
// polls=auto marks each function it placed polls in ("jitlock-polls-placed")
// and leaves marked ones alone, so lowering the output again adds nothing.
//
// The current thread is requested with a call to jitlock.thread(), which
// jitlock-lower-thread then materializes once per function.
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
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Local.h"

#include <string>

#define DEBUG_TYPE "jitlock-lower-safepoints"

using namespace llvm;

STATISTIC(NumPollsInlined, "Safepoint polls lowered to the inline poll");
STATISTIC(NumPollsToRuntime,
          "Safepoint polls lowered to runtime calls only (no-inline)");
STATISTIC(NumPollsRemoved, "Safepoint polls removed (polls=none)");
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

constexpr StringLiteral RuntimePollName = "jitlock_rt_safepoint_poll";

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
    SmallSetVector<Instruction *, 4> Stoppers;
    if (!reachesWithoutPoll(H, U, Stoppers)) {
      ++NumBackEdgesPolling;
      ORE.emit([&] {
        OptimizationRemarkAnalysis R("jitlock", "BackEdgePolls", Term);
        R << "no poll placed in '" << F.getName()
          << "' on the loop back-edge from " << blockName(*U) << " to "
          << blockName(*H) << ": every iteration polls already (";
        for (auto [I, P] : enumerate(Stoppers))
          R << (I ? ", " : "") << describePoll(*P);
        return R << ")";
      });
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
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "NoPollPlace", Term)
               << "no poll placed in '" << F.getName()
               << "' on the loop back-edge from " << blockName(*U) << " to "
               << blockName(*H) << ": neither block can hold a call";
      });
      continue;
    }
    insertPoll(Before);
    ++NumBackEdgePolls;
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "BackEdgePoll", Term)
             << "safepoint poll placed in '" << F.getName()
             << "' on the loop back-edge from " << blockName(*U) << " to "
             << blockName(*H);
    });
  }
}

void PollPlacer::placeAtReturns() {
  for (BasicBlock &BB : F) {
    auto *Ret = dyn_cast<ReturnInst>(BB.getTerminator());
    if (!Ret)
      continue;
    // Nothing may come between a musttail call and its return: the poll
    // goes before the call, unless the call polls.
    Instruction *Before = Ret;
    Instruction *Prev = Ret->getPrevNonDebugInstruction();
    if (CallInst *MustTail = BB.getTerminatingMustTailCall())
      Before = Prev = MustTail;
    if (Prev && mayPoll(*Prev)) {
      ++NumReturnsPolling;
      ORE.emit([&] {
        return OptimizationRemarkAnalysis("jitlock", "ReturnPolls", Ret)
               << "no poll placed in '" << F.getName()
               << "' before the return in " << blockName(BB) << ": it follows "
               << describePoll(*Prev);
      });
      continue;
    }
    insertPoll(Before);
    ++NumReturnPolls;
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "ReturnPoll", Ret)
             << "safepoint poll placed in '" << F.getName()
             << "' before the return in " << blockName(BB);
    });
  }
}

/// polls=auto for every function of `M` not placed already.
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

class PollLowering {
public:
  PollLowering(Module &M, const jitlock_rt_layout &L)
      : M(M), Ctx(M.getContext()), Ptr(PointerType::getUnqual(Ctx)),
        Unlikely(MDBuilder(Ctx).createUnlikelyBranchWeights()) {
    // The byte that holds the armed bit, when one does (bit 0 by default),
    // else the whole word.
    uint64_t Armed = L.poll_armed_bit;
    unsigned Low = countr_zero(Armed), High = 63 - countl_zero(Armed);
    if (Low / 8 == High / 8) {
      unsigned Byte = Low / 8;
      WordTy = Type::getInt8Ty(Ctx);
      ArmedMask = Armed >> (8 * Byte);
      WordOffset = int64_t(L.poll_word_offset) +
                   (M.getDataLayout().isBigEndian() ? 7 - Byte : Byte);
      WordAlign = Align(1);
    } else {
      WordTy = Type::getInt64Ty(Ctx);
      ArmedMask = Armed;
      WordOffset = L.poll_word_offset;
      WordAlign = Align(8);
    }
  }

  /// Lower `Poll`, which runs inside the funclet `Pad` (FuncletColors):
  /// the calls created carry its bundle.
  void lowerInline(CallInst &Poll, Instruction *Pad);
  void lowerToRuntimeCall(CallInst &Poll, Instruction *Pad);

private:
  FunctionCallee slowPath() {
    // void jitlock_rt_safepoint_poll(jitlock_thread *)
    FunctionCallee F = M.getOrInsertFunction(
        RuntimePollName,
        FunctionType::get(Type::getVoidTy(Ctx), {Ptr}, /*isVarArg=*/false));
    if (auto *Fn = dyn_cast<Function>(F.getCallee()))
      Fn->setDoesNotThrow();
    return F;
  }
  /// P2, inside the same funclet as the poll.
  CallInst *emitSlowCall(IRBuilder<> &B, Value *Thread, Instruction *Pad) {
    return createCallIn(B, slowPath(), {Thread}, Pad);
  }

  Module &M;
  LLVMContext &Ctx;
  PointerType *Ptr;
  MDNode *Unlikely;
  Type *WordTy;
  uint64_t ArmedMask;
  int64_t WordOffset;
  Align WordAlign;
};

void PollLowering::lowerInline(CallInst &Poll, Instruction *Pad) {
  Function *F = Poll.getFunction();
  BasicBlock *Head = Poll.getParent();
  BasicBlock *Done = Head->splitBasicBlock(&Poll, "jitlock.poll.done");
  Head->getTerminator()->eraseFromParent();
  BasicBlock *Slow = BasicBlock::Create(Ctx, "jitlock.poll.slow", F, Done);

  IRBuilder<> B(Head);
  B.SetCurrentDebugLocation(Poll.getDebugLoc());
  Value *Thread = requestThread(B, Pad);
  // P1: one load, one test, one branch to the out-of-line P2.
  Value *Addr = B.CreateConstGEP1_64(B.getInt8Ty(), Thread, WordOffset,
                                     "jitlock.poll.addr");
  Value *Word = B.CreateAlignedLoad(WordTy, Addr, WordAlign,
                                    /*isVolatile=*/true, "jitlock.poll.word");
  Value *Armed =
      B.CreateICmpNE(B.CreateAnd(Word, ArmedMask, "jitlock.poll.bit"),
                     ConstantInt::get(WordTy, 0), "jitlock.poll.armed");
  B.CreateCondBr(Armed, Slow, Done, Unlikely);

  // P2: stops at the safepoint or runs the handshakes, then continues here.
  B.SetInsertPoint(Slow);
  emitSlowCall(B, Thread, Pad)->addFnAttr(Attribute::Cold);
  B.CreateBr(Done);

  Poll.eraseFromParent();
  ++NumPollsInlined;
}

void PollLowering::lowerToRuntimeCall(CallInst &Poll, Instruction *Pad) {
  IRBuilder<> B(&Poll);
  emitSlowCall(B, requestThread(B, Pad), Pad);
  Poll.eraseFromParent();
  ++NumPollsToRuntime;
}

} // namespace

PreservedAnalyses LowerSafepointsPass::run(Module &M,
                                           ModuleAnalysisManager &MAM) {
  Function *PollFn = M.getFunction(SafepointPollName);
  // polls=auto may come from the configuration or from a module flag.
  bool MayPlace =
      Config.Polls == PollMode::Auto || M.getModuleFlag("jitlock.polls");
  if ((!PollFn || PollFn->use_empty()) && !MayPlace)
    return PreservedAnalyses::all();

  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved)
    return PreservedAnalyses::all();
  const ResolvedConfig &C = *Resolved;
  if (C.Layout.poll_armed_bit == 0) {
    reportError(M.getContext(), "the runtime's layout has no poll_armed_bit");
    return PreservedAnalyses::all();
  }

  if (C.Polls == PollMode::Auto)
    placePolls(M, C);
  PollFn = M.getFunction(SafepointPollName);
  if (!PollFn)
    return preservedByLowering();

  // Collect first, in program order: lowering splits blocks. The runtime
  // never unwinds, so an invoke is a call followed by a branch to its normal
  // destination.
  SmallVector<CallBase *, 16> Calls;
  for (Function &F : M)
    for (Instruction &I : instructions(F))
      if (auto *CB = dyn_cast<CallBase>(&I);
          CB && CB->getCalledOperand() == PollFn &&
          isWellFormedCall(*CB, SafepointPollName))
        Calls.push_back(CB);
  SmallVector<CallInst *, 16> Polls;
  for (CallBase *CB : Calls) {
    if (auto *II = dyn_cast<InvokeInst>(CB))
      CB = changeToCall(II);
    if (auto *CI = dyn_cast<CallInst>(CB))
      Polls.push_back(CI);
  }
  // Each poll's funclet, while all of them are in their own blocks.
  FuncletColors Colors;
  DenseMap<const CallInst *, Instruction *> Funclets;
  for (CallInst *CI : Polls)
    Funclets[CI] = Colors.padOf(*CI);

  PollLowering Lowering(M, C.Layout);
  bool Lowered = false;
  for (CallInst *CI : Polls) {
    Function &F = *CI->getFunction();
    OptimizationRemarkEmitter ORE(&F);
    if (C.Polls == PollMode::None) {
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "PollRemoved", CI)
               << "safepoint poll removed in '" << F.getName()
               << "': polls=none";
      });
      CI->eraseFromParent();
      ++NumPollsRemoved;
      continue;
    }
    if (C.Thread == ThreadMode::Arg)
      if (const char *Problem = threadParameterProblem(F)) {
        reportError(*CI, Problem);
        continue;
      }
    Lowered = true;
    if (!C.Inline) {
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "RuntimeCall", CI)
               << "safepoint poll in '" << F.getName()
               << "' sent to the runtime: inline fast paths are disabled "
                  "(no-inline)";
      });
      Lowering.lowerToRuntimeCall(*CI, Funclets.lookup(CI));
      continue;
    }
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "Inlined", CI)
             << "safepoint poll in '" << F.getName()
             << "' lowered to an inline poll-word test";
    });
    LLVM_DEBUG(dbgs() << "jitlock: lowering a poll in " << F.getName() << ": "
                      << *CI << "\n");
    Lowering.lowerInline(*CI, Funclets.lookup(CI));
  }
  if (PollFn->use_empty())
    PollFn->eraseFromParent();

  // The poll word's offset and armed bit are compiled in: stamp them.
  if (Lowered)
    stampLoweredLayout(M, C.Layout);
  return preservedByLowering();
}

/// The rule at the top of this file: what may poll.
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
