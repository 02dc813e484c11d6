//===- LowerStackBang.cpp - Method-entry stack checks ---------------------===//
//
// Gives every function with the "jitlock-stack-bang" attribute a check at
// the start of its entry block that the thread's stack has room for the
// shadow zone below the stack pointer (docs/stack-banging.md). The
// attribute's value is empty or a decimal count of extra frame bytes, which
// the check subtracts from the stack pointer first. Three modes (bang=...):
//
//   watermark  need = sp - extra; if need > [thread + watermark] (unsigned),
//              continue; else call jitlock_rt_stack_bang(thread, need) in a
//              cold block, out of line. The steady state is one load, one
//              compare and one branch.
//   always     a store to every page from sp - page down to
//              sp - extra - shadow pages * page, on every entry: the scheme
//              the watermark replaces. A store that lands in a guard zone
//              faults, and the runtime's SIGSEGV backstop recovers.
//   none       no check.
//
// In every mode the function also gets "probe-stack"="inline-asm", so that a
// frame larger than a page probes its pages in the prologue and cannot jump
// over the guard zones. The attribute is removed once lowered, so lowering
// the output again adds nothing.
//
// The stack pointer is read with llvm.stacksave: it is target-independent
// (llvm.read_register needs a per-target register name, which a module
// without a triple cannot pick), becomes a plain copy from sp, and is not
// moved across memory operations. Read after the prologue, it already
// includes this function's own frame.
//
// The current thread is requested with a call to jitlock.thread(), which
// jitlock-lower-thread then materializes once per function.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "jitlock-lower-stack-bang"

using namespace llvm;

STATISTIC(NumChecked, "Functions given a method-entry stack check");
STATISTIC(NumUnchecked, "Functions lowered with bang=none (no check)");

namespace jitlock {
namespace {

/// Pages banged inline by `always` before it switches to a loop.
constexpr uint64_t MaxUnrolledBangs = 64;

Error attributeError(const Twine &Msg) {
  return make_error<StringError>(Msg, inconvertibleErrorCode());
}

/// The extra frame bytes of "jitlock-stack-bang"=<value>, or a message
/// saying what is wrong with the value.
Expected<uint64_t> parseExtraBytes(StringRef Value) {
  if (Value.empty())
    return 0;
  uint64_t Extra;
  if (Value.getAsInteger(10, Extra))
    return attributeError("\"" + Twine(StackBangAttr) +
                          "\" must be empty or a decimal count of extra "
                          "frame bytes, got \"" +
                          Value + "\"");
  if (Extra > MaxStackBangExtra)
    return attributeError("\"" + Twine(StackBangAttr) + "\"=\"" + Value +
                          "\" is larger than any thread stack (at most " +
                          Twine(MaxStackBangExtra) + " extra frame bytes)");
  return Extra;
}

class StackBangLowering {
public:
  StackBangLowering(Module &M, const ResolvedConfig &C)
      : M(M), Ctx(M.getContext()), L(C.Layout),
        IntPtr(M.getDataLayout().getIntPtrType(Ctx)),
        Ptr(PointerType::getUnqual(Ctx)) {}

  /// Inserts the check of `Mode` at the start of `F`'s entry block.
  void lower(Function &F, BangMode Mode, uint64_t Extra);

private:
  /// Splits the entry block after its leading static allocas, which must
  /// stay in the entry block to stay part of the fixed frame, and returns
  /// the block the check continues to.
  BasicBlock *splitEntry(Function &F, const Twine &Name);
  void emitWatermarkCheck(Function &F, uint64_t Extra);
  void emitAlwaysBang(Function &F, uint64_t Extra);

  Value *stackPointer(IRBuilder<> &B) {
    Value *SP = B.CreateStackSave("jitlock.sp.addr");
    return B.CreatePtrToInt(SP, IntPtr, "jitlock.sp");
  }
  // The check is in the entry block, which no EH funclet contains: its
  // calls need no "funclet" bundle.
  Value *currentThread(IRBuilder<> &B) {
    return requestThread(B, /*Pad=*/nullptr);
  }
  FunctionCallee slowPath() {
    // void jitlock_rt_stack_bang(jitlock_thread *, uintptr_t)
    FunctionCallee F = M.getOrInsertFunction(
        "jitlock_rt_stack_bang",
        FunctionType::get(Type::getVoidTy(Ctx), {Ptr, IntPtr}, false));
    if (auto *Fn = dyn_cast<Function>(F.getCallee()))
      Fn->setDoesNotThrow();
    return F;
  }

  Module &M;
  LLVMContext &Ctx;
  const jitlock_rt_layout &L;
  IntegerType *IntPtr;
  PointerType *Ptr;
};

BasicBlock *StackBangLowering::splitEntry(Function &F, const Twine &Name) {
  BasicBlock &Entry = F.getEntryBlock();
  // Static allocas further down move up: moving a fixed frame slot changes
  // nothing, while leaving it below the split would make it dynamic.
  BasicBlock::iterator Top = Entry.getFirstNonPHIOrDbgOrAlloca();
  for (Instruction &I : make_early_inc_range(make_range(Top, Entry.end())))
    if (auto *AI = dyn_cast<AllocaInst>(&I); AI && AI->isStaticAlloca())
      AI->moveBefore(&*Top);
  BasicBlock *Rest = Entry.splitBasicBlock(Top, Name);
  Entry.getTerminator()->eraseFromParent();
  return Rest;
}

void StackBangLowering::emitWatermarkCheck(Function &F, uint64_t Extra) {
  BasicBlock *Entry = &F.getEntryBlock();
  BasicBlock *Done = splitEntry(F, "jitlock.bang.done");
  BasicBlock *Slow = BasicBlock::Create(Ctx, "jitlock.bang.slow", &F, Done);

  IRBuilder<> B(Entry);
  Value *Thread = currentThread(B);
  Value *SP = stackPointer(B);
  Value *Need = Extra ? B.CreateSub(SP, ConstantInt::get(IntPtr, Extra),
                                    "jitlock.sp.needed")
                      : SP;
  // Only the owner writes its watermark, so a plain load suffices.
  Value *MarkAddr =
      B.CreateConstGEP1_64(B.getInt8Ty(), Thread, L.stack_watermark_offset,
                           "jitlock.watermark.addr");
  Value *Mark = B.CreateAlignedLoad(
      IntPtr, MarkAddr, Align(IntPtr->getBitWidth() / 8), "jitlock.watermark");
  Value *Above = B.CreateICmpUGT(Need, Mark, "jitlock.above.watermark");
  B.CreateCondBr(Above, Done, Slow, MDBuilder(Ctx).createLikelyBranchWeights());

  // At or below the watermark: the runtime bangs the shadow pages and
  // lowers the mark, or reports the overflow and does not return.
  B.SetInsertPoint(Slow);
  createCallIn(B, slowPath(), {Thread, Need}, /*Pad=*/nullptr)
      ->addFnAttr(Attribute::Cold);
  B.CreateBr(Done);
}

void StackBangLowering::emitAlwaysBang(Function &F, uint64_t Extra) {
  uint64_t Page = L.stack_page_size;
  uint64_t Pages = L.stack_shadow_pages + divideCeil(Extra, Page);
  if (Pages == 0)
    return;
  BasicBlock *Entry = &F.getEntryBlock();
  BasicBlock *Done = splitEntry(F, "jitlock.bang.done");

  IRBuilder<> B(Entry);
  Value *SP = B.CreateStackSave("jitlock.sp.addr");
  // One volatile store per page, top down, so that the first page touched
  // in a guard zone is its highest one. `Down` is a negative byte offset.
  auto Touch = [&](Value *Down) {
    Value *Addr = B.CreateGEP(B.getInt8Ty(), SP, Down, "jitlock.bang.addr");
    B.CreateStore(B.getInt8(0), Addr, /*isVolatile=*/true);
  };
  int64_t PageDown = -int64_t(Page);
  if (Pages <= MaxUnrolledBangs) {
    for (uint64_t I = 1; I <= Pages; ++I)
      Touch(B.getInt64(int64_t(I) * PageDown));
    B.CreateBr(Done);
    return;
  }

  // Too many pages to unroll: the same stores in a counted loop.
  BasicBlock *Loop = BasicBlock::Create(Ctx, "jitlock.bang.loop", &F, Done);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  PHINode *Down = B.CreatePHI(B.getInt64Ty(), 2, "jitlock.bang.down");
  Down->addIncoming(B.getInt64(PageDown), Entry);
  Touch(Down);
  Value *Next = B.CreateAdd(Down, B.getInt64(PageDown), "jitlock.bang.next");
  Down->addIncoming(Next, Loop);
  Value *More = B.CreateICmpSGE(Next, B.getInt64(int64_t(Pages) * PageDown),
                                "jitlock.bang.more");
  B.CreateCondBr(More, Loop, Done);
}

void StackBangLowering::lower(Function &F, BangMode Mode, uint64_t Extra) {
  switch (Mode) {
  case BangMode::Watermark:
    emitWatermarkCheck(F, Extra);
    break;
  case BangMode::Always:
    emitAlwaysBang(F, Extra);
    break;
  case BangMode::None:
    break;
  }
  // Frames larger than a page probe their pages in the prologue. A probe
  // function the frontend chose already probes; keep it.
  if (!F.hasFnAttribute("probe-stack"))
    F.addFnAttr("probe-stack", "inline-asm");
  F.removeFnAttr(StackBangAttr);
}

} // namespace

PreservedAnalyses LowerStackBangPass::run(Module &M,
                                          ModuleAnalysisManager &MAM) {
  if (none_of(M, [](Function &F) { return F.hasFnAttribute(StackBangAttr); }))
    return PreservedAnalyses::all();

  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved)
    return PreservedAnalyses::all();

  // The default pipelines lower the other modes at their end, which also
  // diagnoses their attributes, once; see registerPasses.
  if (Only == Scope::ArgModeOnly && Resolved->Thread != ThreadMode::Arg)
    return PreservedAnalyses::all();

  SmallVector<std::pair<Function *, uint64_t>, 16> Work;
  for (Function &F : M) {
    if (!F.hasFnAttribute(StackBangAttr))
      continue;
    if (F.isDeclaration()) {
      reportError(F, "\"" + Twine(StackBangAttr) +
                         "\" is on a declaration; only a definition "
                         "can check its stack at entry");
      continue;
    }
    // A naked function's body is its own assembly, prologue included: a
    // check inserted before it would clobber the argument registers that
    // assembly reads, and could not be undone by it.
    if (F.hasFnAttribute(Attribute::Naked)) {
      reportError(F, "\"" + Twine(StackBangAttr) +
                         "\" is on a naked function, which has no "
                         "prologue: the check would clobber the argument "
                         "registers its assembly reads");
      continue;
    }
    Expected<uint64_t> Extra =
        parseExtraBytes(F.getFnAttribute(StackBangAttr).getValueAsString());
    if (!Extra) {
      reportError(F, toString(Extra.takeError()));
      continue;
    }
    Work.push_back({&F, *Extra});
  }
  if (Work.empty())
    return PreservedAnalyses::all();

  StackBangLowering Lowering(M, *Resolved);
  BangMode Mode = Resolved->Bang;
  for (auto [F, Extra] : Work) {
    LLVM_DEBUG(dbgs() << "jitlock: stack check (" << bangModeName(Mode) << ", "
                      << Extra << " extra bytes) in " << F->getName() << "\n");
    Lowering.lower(*F, Mode, Extra);
    OptimizationRemarkEmitter ORE(F);
    if (Mode == BangMode::None) {
      ++NumUnchecked;
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "NoStackBang", F)
               << "no method-entry stack check in '"
               << ore::NV("Function", F->getName()) << "': bang=none ("
               << ore::NV("ExtraBytes", Extra) << " extra frame bytes)";
      });
      continue;
    }
    ++NumChecked;
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "StackBang", F)
             << "method-entry stack check in '"
             << ore::NV("Function", F->getName())
             << "': bang=" << ore::NV("Mode", bangModeName(Mode)) << ", "
             << ore::NV("ExtraBytes", Extra) << " extra frame bytes";
    });
  }

  // The checks compiled in the watermark offset (watermark) or the page size
  // and shadow pages (always): stamp them, as the monitor lowering does.
  if (Mode != BangMode::None)
    stampLoweredLayout(M, Resolved->Layout);
  return preservedByLowering();
}

} // namespace jitlock
