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
// polls=none removes every poll; polls=explicit (the default) and
// polls=auto lower the ones there are: polls=auto's are placed before this
// pass runs, by jitlock-place-polls (lib/Passes/PlacePolls.cpp).
//
// The current thread is requested with a call to jitlock.thread(), which
// jitlock-lower-thread then materializes once per function.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Transforms/Utils/Local.h"

#define DEBUG_TYPE "jitlock-lower-safepoints"

using namespace llvm;

STATISTIC(NumPollsInlined, "Safepoint polls lowered to the inline poll");
STATISTIC(NumPollsToRuntime,
          "Safepoint polls lowered to runtime calls only (no-inline)");
STATISTIC(NumPollsRemoved, "Safepoint polls removed (polls=none)");
namespace jitlock {
namespace {

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
  if (!PollFn || PollFn->use_empty())
    return PreservedAnalyses::all();

  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved)
    return PreservedAnalyses::all();
  const ResolvedConfig &C = *Resolved;
  if (C.Layout.poll_armed_bit == 0) {
    reportError(M.getContext(), "the runtime's layout has no poll_armed_bit");
    return PreservedAnalyses::all();
  }

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

} // namespace jitlock
