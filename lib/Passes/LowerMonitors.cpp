//===- LowerMonitors.cpp - Inline monitor enter/exit fast paths -----------===//
//
// Replaces each jitlock.monitor.enter/exit with the inline fast path of the
// protocol stated in lib/Runtime/Synchronizer.cpp; the step labels below
// (E1-E5, M1-M2, X1-X4, N1-N3) are that comment's. Every other case calls the
// runtime's jitlock_rt_monitor_enter/exit_slow, in a block with cold branch
// weights, so that the fast path is straight-line code.
//
// With locking=heavy the enter has no fast lock (E4-E5) and no lock-stack
// push: after the full-stack test (E2), a monitor header goes straight to
// M1, anything else to the runtime. The exit is the same in both modes,
// since it handles every state.
//
// With locking=reserved (the layout's reserve_mask and the thread's tag at
// reserve_tag_offset, see jitlock_rt_layout) the enter tests R1 right after
// E2: a header reserved to this thread is pushed, no atomic. Otherwise the
// lightweight path, whose E5 CASes only a header with the field 0; a
// reservable one (R2) or one reserved to another thread (R3) goes to the
// runtime. The exit adds R4 after X3: a header still reserved to this
// thread needs nothing more; a revoked one (fast-locked by the revocation)
// takes X4.
//
// The monitor storage (monitors=pointer|index|table, jitlock_rt_layout's
// monitor_storage) changes only the first step of M1 and N2, how the
// monitor m is found from a header whose tag is 10:
//   pointer  m = h - 10; its fields are reached as h + (offset - 10).
//   index    m = base + (h >> shift) * stride, base loaded from the thread.
//   table    unrolled probes of the thread's monitor cache: the first entry
//            whose object is obj gives m; a miss calls the runtime, which
//            fills the cache.
// Either way the monitor's fields stay ordered after the header load that
// named m (the address dependency of M1's comment): index computes m from
// h, and a table hit depends on the tag test of h and on the thread's own
// cache, which only the thread (or a handshake run for it, which
// synchronizes with it) writes.
//
// The inflated exit (exit=store|fence, jitlock_rt_layout's monitor_exit)
// changes only N3: whether a full fence or a single-thread (compiler-only)
// fence separates its release store of the owner word from its load of the
// entry count. A nonzero count calls
// jitlock_rt_monitor_exit_queued_slow, since the monitor is released by
// then.
//
// The current thread is requested with a call to jitlock.thread(), which
// jitlock-lower-thread then materializes once per function.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Support/Debug.h"
#include "llvm/Transforms/Utils/Local.h"

#define DEBUG_TYPE "jitlock-lower-monitors"

using namespace llvm;

STATISTIC(NumEntersInlined, "Monitor enters lowered to inline fast paths");
STATISTIC(NumExitsInlined, "Monitor exits lowered to inline fast paths");
STATISTIC(NumRuntimeCalls, "Monitor operations lowered to runtime calls only");
STATISTIC(NumReservedInlined,
          "Monitor enters and exits lowered with reservation (R1, R4)");

namespace jitlock {
namespace {

class MonitorLowering {
public:
  MonitorLowering(Module &M, const ResolvedConfig &C)
      : M(M), Ctx(M.getContext()), L(C.Layout),
        Heavy(C.Locking == LockingMode::Heavy),
        Reserved(C.Locking == LockingMode::Reserved), Storage(C.Monitors),
        Exit(C.Exit), I8(Type::getInt8Ty(Ctx)), I32(Type::getInt32Ty(Ctx)),
        I64(Type::getInt64Ty(Ctx)), Ptr(PointerType::getUnqual(Ctx)) {
    MDBuilder MDB(Ctx);
    Likely = MDB.createLikelyBranchWeights();
    Unlikely = MDB.createUnlikelyBranchWeights();
  }

  void lowerEnter(CallBase &CB);
  void lowerExit(CallBase &CB);
  void lowerToRuntimeCall(CallBase &CB, bool Enter);
  /// The EH funclet the next operation lowered is in (see FuncletColors):
  /// every call the lowering creates carries its bundle.
  void setFunclet(Instruction *P) { Pad = P; }

private:
  /// The blocks of the lightweight fast lock, E3-E5 and the push.
  struct FastLockBlocks {
    BasicBlock *CheckTop = nullptr, *Cas = nullptr, *Push = nullptr,
               *Inflated = nullptr;
    /// Reserved locking: R1's push, and E5's test of the field.
    BasicBlock *ReservedPush = nullptr, *Unreserved = nullptr;
    /// The thread's reserve tag, loaded for R1 (R2 writes it).
    Value *Tag = nullptr;
  };
  FastLockBlocks createFastLockBlocks(Function *F, BasicBlock *Done);
  /// E3-E5 and the push, from the header `H` and the lock-stack top `Top`
  /// (at `TopAddr`, not full) loaded before the current block. Leaves `B` in
  /// Fast.Inflated, reached when bit 1 is set, and returns whether the
  /// header there is a monitor's.
  Value *emitFastLock(IRBuilder<> &B, const FastLockBlocks &Fast, Value *Obj,
                      Value *Thread, Value *HeaderAddr, Value *H,
                      Value *TopAddr, Value *Top, BasicBlock *Slow,
                      BasicBlock *Done);
  /// Pushes `Obj` on the lock stack whose top `Top` (not full) is at
  /// `TopAddr`, at `Slot` (thread + top). Only this thread writes its lock
  /// stack, so plain stores suffice; they are relaxed atomics for the racy
  /// readers.
  void emitPush(IRBuilder<> &B, Value *Obj, Value *Slot, Value *TopAddr,
                Value *Top) {
    storeRelaxed(B, Obj, Slot);
    storeRelaxed(B, B.CreateAdd(Top, B.getInt32(8), "jitlock.top.next"),
                 TopAddr);
  }
  /// R1 and R4's test: header `H` is reserved to this thread, unlocked.
  /// The thread's tag is ~0 while it may not reserve, which no masked
  /// header equals.
  Value *isReservedToSelf(IRBuilder<> &B, Value *H, Value *Thread,
                          Value **TagOut = nullptr) {
    Value *Tag = loadRelaxed(
        B, I64, byteAddr(B, Thread, L.reserve_tag_offset, "jitlock.tag.addr"),
        "jitlock.tag");
    if (TagOut)
      *TagOut = Tag;
    return B.CreateICmpEQ(B.CreateAnd(H, L.reserve_mask, "jitlock.reserve"),
                          Tag, "jitlock.reserved.to.self");
  }
  /// Header `H` holds a monitor: its low bits are exactly 10.
  Value *isMonitor(IRBuilder<> &B, Value *H) {
    return B.CreateICmpEQ(B.CreateAnd(H, L.lock_mask),
                          B.getInt64(L.monitor_value), "jitlock.is.monitor");
  }
  /// int <Name>(jitlock_thread *, void *): the runtime's slow paths.
  FunctionCallee runtimeEntry(StringRef Name) {
    FunctionCallee F =
        M.getOrInsertFunction(Name, FunctionType::get(I32, {Ptr, Ptr}, false));
    if (auto *Fn = dyn_cast<Function>(F.getCallee()))
      Fn->setDoesNotThrow();
    return F;
  }
  FunctionCallee slowPath(bool Enter) {
    return runtimeEntry(Enter ? "jitlock_rt_monitor_enter_slow"
                              : "jitlock_rt_monitor_exit_slow");
  }
  /// The slow block: the runtime call, from the state before the attempt,
  /// then back to Done.
  void emitSlowCall(IRBuilder<> &B, BasicBlock *Slow, BasicBlock *Done,
                    bool Enter, Value *Thread, Value *Obj) {
    B.SetInsertPoint(Slow);
    createCallIn(B, slowPath(Enter), {Thread, Obj}, Pad)
        ->addFnAttr(Attribute::Cold);
    B.CreateBr(Done);
  }
  Value *currentThread(IRBuilder<> &B) { return requestThread(B, Pad); }
  /// The object in the default address space. A frontend whose objects live
  /// in another one (a GC's `ptr addrspace(1)`) gets a cast at the start of
  /// each lowered operation, used only inside it: the lock stack, the
  /// monitor and the runtime hold plain addresses, and nothing derived from
  /// the cast outlives the operation, so a relocating collector's view of
  /// the frontend's pointer is unchanged.
  Value *objectPointer(IRBuilder<> &B, Value *Obj) {
    if (Obj->getType() == Ptr)
      return Obj;
    return B.CreateAddrSpaceCast(Obj, Ptr, "jitlock.object");
  }
  /// What the lowering of enter or exit call `CB` starts from, emitted at
  /// `B` with the call's debug location: the object, the thread and the
  /// header's address.
  struct Operands {
    Value *Obj, *Thread, *HeaderAddr;
  };
  Operands operandsOf(IRBuilder<> &B, CallBase &CB) {
    B.SetCurrentDebugLocation(CB.getDebugLoc());
    Value *Obj = objectPointer(B, CB.getArgOperand(0));
    Value *Thread = currentThread(B);
    return {Obj, Thread,
            byteAddr(B, Obj, L.header_offset, "jitlock.header.addr")};
  }
  Value *byteAddr(IRBuilder<> &B, Value *Base, Value *Offset,
                  const Twine &Name) {
    return B.CreateGEP(I8, Base, Offset, Name);
  }
  Value *byteAddr(IRBuilder<> &B, Value *Base, int64_t Offset,
                  const Twine &Name) {
    if (Offset == 0)
      return Base;
    return byteAddr(B, Base, B.getInt64(Offset), Name);
  }
  /// The monitor a header with tag 10 names: with pointer storage the
  /// header itself (Tagged: the fields are at h + offset - 10), otherwise
  /// the monitor's address.
  struct MonitorRef {
    Value *Tagged = nullptr;
    Value *Address = nullptr;
  };
  /// The first step of M1 and N2: finds the monitor of `Obj`, whose header
  /// `H` has tag 10 (see the file comment). Leaves `B` where the monitor is
  /// known; a table miss branches to `Slow`. `Step` names the blocks.
  /// `ForExit`: a thread that is not attached reaches N2 (its lock stack
  /// stops only the enter, at E2), and has no index base.
  MonitorRef findMonitor(IRBuilder<> &B, Value *H, Value *Obj, Value *Thread,
                         BasicBlock *Slow, BasicBlock *Before,
                         const Twine &Step, bool ForExit);
  /// What M1 and N2 read before deciding: the monitor (findMonitor), its
  /// owner word's address and the word, loaded relaxed, and the calling
  /// thread as the word that names it.
  struct OwnerRead {
    MonitorRef Mon;
    Value *Self = nullptr;
    Value *OwnerAddr = nullptr;
    Value *Owner = nullptr;
  };
  OwnerRead readOwner(IRBuilder<> &B, Value *H, Value *Obj, Value *Thread,
                      BasicBlock *Slow, BasicBlock *Before, const Twine &Step,
                      bool ForExit) {
    OwnerRead R;
    R.Mon = findMonitor(B, H, Obj, Thread, Slow, Before, Step, ForExit);
    R.Self = B.CreatePtrToInt(Thread, I64, "jitlock.self");
    R.OwnerAddr =
        monitorField(B, R.Mon, L.monitor_owner_offset, "jitlock.owner.addr");
    R.Owner = loadRelaxed(B, I64, R.OwnerAddr, "jitlock.owner");
    return R;
  }
  /// An address inside the monitor `Mon`.
  Value *monitorField(IRBuilder<> &B, const MonitorRef &Mon, uint32_t Offset,
                      const Twine &Name) {
    if (!Mon.Tagged)
      return byteAddr(B, Mon.Address, int64_t(Offset), Name);
    Value *Monitor =
        B.CreateIntToPtr(Mon.Tagged, Ptr, "jitlock.monitor.tagged");
    return byteAddr(B, Monitor, int64_t(Offset) - int64_t(L.monitor_value),
                    Name);
  }
  LoadInst *loadRelaxed(IRBuilder<> &B, Type *Ty, Value *Addr,
                        const Twine &Name) {
    // Relaxed: other threads read lock stacks and headers racily, so these
    // are atomic accesses, which cost nothing over plain ones on either
    // target.
    LoadInst *LI = B.CreateLoad(Ty, Addr, Name);
    LI->setAtomic(AtomicOrdering::Monotonic);
    LI->setAlignment(Align(Ty == I32 ? 4 : 8));
    return LI;
  }
  void storeRelaxed(IRBuilder<> &B, Value *V, Value *Addr) {
    StoreInst *SI = B.CreateStore(V, Addr);
    SI->setAtomic(AtomicOrdering::Monotonic);
    SI->setAlignment(Align(V->getType() == I32 ? 4 : 8));
  }
  Value *cas(IRBuilder<> &B, Value *Addr, Value *Expected, Value *Desired,
             AtomicOrdering Success, const Twine &Name) {
    AtomicCmpXchgInst *X =
        B.CreateAtomicCmpXchg(Addr, Expected, Desired, MaybeAlign(8), Success,
                              AtomicOrdering::Monotonic);
    X->setName(Name);
    return X;
  }
  BasicBlock *newBlock(Function *F, const Twine &Name, BasicBlock *Before) {
    return BasicBlock::Create(Ctx, Name, F, Before);
  }
  void branch(IRBuilder<> &B, Value *Cond, BasicBlock *T, BasicBlock *F,
              MDNode *Weights) {
    B.CreateCondBr(Cond, T, F, Weights);
  }

  Module &M;
  LLVMContext &Ctx;
  const jitlock_rt_layout &L;
  /// Heavy locking: enters take no fast lock, and exits expect a monitor.
  bool Heavy;
  /// Reserved locking: R1 ahead of the fast lock, R4 ahead of X4, and E5
  /// only for a header whose reservation field is 0.
  bool Reserved;
  MonitorStorage Storage;
  InflatedExit Exit;
  Type *I8, *I32, *I64;
  PointerType *Ptr;
  MDNode *Likely, *Unlikely;
  Instruction *Pad = nullptr;
};

/// Splits before `CB`, leaving the code before it in a block with no
/// terminator and returning the block that starts at `CB`.
BasicBlock *splitAt(CallBase &CB, const Twine &Name) {
  BasicBlock *Head = CB.getParent();
  BasicBlock *Done = Head->splitBasicBlock(&CB, Name);
  Head->getTerminator()->eraseFromParent();
  return Done;
}

void MonitorLowering::lowerEnter(CallBase &CB) {
  Function *F = CB.getFunction();
  BasicBlock *Head = CB.getParent();
  BasicBlock *Done = splitAt(CB, "jitlock.enter.done");
  BasicBlock *CheckHeader = newBlock(F, "jitlock.enter.header", Done);
  FastLockBlocks Fast;
  if (!Heavy)
    Fast = createFastLockBlocks(F, Done);
  BasicBlock *Owned = newBlock(F, "jitlock.enter.owned", Done);
  BasicBlock *Recursive = newBlock(F, "jitlock.enter.monitor.recursive", Done);
  BasicBlock *Slow = newBlock(F, "jitlock.enter.slow", Done);

  IRBuilder<> B(Head);
  auto [Obj, Thread, HeaderAddr] = operandsOf(B, CB);
  // E1.
  Value *H = loadRelaxed(B, I64, HeaderAddr, "jitlock.header");
  // E2: a full lock stack goes to the runtime, which inflates the oldest.
  // Before the header is looked at, in both modes: a thread that is not
  // attached has a full lock stack, and must not take a monitor in M1.
  Value *TopAddr =
      byteAddr(B, Thread, L.lock_stack_top_offset, "jitlock.top.addr");
  Value *Top = loadRelaxed(B, I32, TopAddr, "jitlock.top");
  Value *Full = B.CreateICmpUGE(Top, B.getInt32(L.lock_stack_end_offset),
                                "jitlock.stack.full");
  branch(B, Full, Slow, CheckHeader, Unlikely);
  B.SetInsertPoint(CheckHeader);
  if (Reserved) {
    // R1: reserved to this thread: push, no atomic.
    branch(B, isReservedToSelf(B, H, Thread, &Fast.Tag), Fast.ReservedPush,
           Fast.Unreserved, Likely);
    B.SetInsertPoint(Fast.ReservedPush);
    emitPush(B, Obj,
             byteAddr(B, Thread, B.CreateZExt(Top, I64), "jitlock.slot"),
             TopAddr, Top);
    B.CreateBr(Done);
    B.SetInsertPoint(Fast.Unreserved);
  }
  // Heavy: no fast lock. A monitor (exactly 10) takes M1 below; every other
  // state goes to the runtime, which inflates.
  Value *IsMonitor = Heavy ? isMonitor(B, H)
                           : emitFastLock(B, Fast, Obj, Thread, HeaderAddr, H,
                                          TopAddr, Top, Slow, Done);

  // M1: a monitor (exactly 10): test, then CAS. The owner word is loaded
  // first (relaxed: the CAS is the acquire); only a free monitor (0) is
  // CASed, since a failing CAS would take the owner's cache line all the
  // same. Nonzero and not self (anonymous, queued bit, another owner): the
  // runtime.
  BasicBlock *TakeMonitor = newBlock(F, "jitlock.enter.monitor", Owned);
  BasicBlock *CasMonitor = newBlock(F, "jitlock.enter.monitor.cas", Owned);
  branch(B, IsMonitor, TakeMonitor, Slow, Likely);
  B.SetInsertPoint(TakeMonitor);
  auto [Mon, Self, OwnerAddr, Owner] =
      readOwner(B, H, Obj, Thread, Slow, CasMonitor, "jitlock.enter.monitor",
                /*ForExit=*/false);
  branch(B, B.CreateICmpEQ(Owner, B.getInt64(0), "jitlock.owner.is.free"),
         CasMonitor, Owned, Likely);
  // Free: CAS owner 0 -> self, acquire (the acquisition). On failure
  // someone took it meanwhile: the runtime. The expected 0 is the value
  // loaded, so that x86 finds it in rax already.
  B.SetInsertPoint(CasMonitor);
  Value *OwnerPair = cas(B, OwnerAddr, Owner, Self, AtomicOrdering::Acquire,
                         "jitlock.owner.cas");
  branch(B, B.CreateExtractValue(OwnerPair, 1), Done, Slow, Likely);

  // M2: already ours: one more recursion; only the owner writes the count.
  B.SetInsertPoint(Owned);
  Value *Mine = B.CreateICmpEQ(Owner, Self, "jitlock.owner.is.self");
  branch(B, Mine, Recursive, Slow, Likely);
  B.SetInsertPoint(Recursive);
  Value *RecAddr = monitorField(B, Mon, L.monitor_recursions_offset,
                                "jitlock.recursions.addr");
  Value *Rec = loadRelaxed(B, I64, RecAddr, "jitlock.recursions");
  storeRelaxed(B, B.CreateAdd(Rec, B.getInt64(1)), RecAddr);
  B.CreateBr(Done);

  // Everything else: the runtime, from the state before this attempt.
  emitSlowCall(B, Slow, Done, /*Enter=*/true, Thread, Obj);

  CB.eraseFromParent();
  ++NumEntersInlined;
  NumReservedInlined += Reserved;
}

MonitorLowering::FastLockBlocks
MonitorLowering::createFastLockBlocks(Function *F, BasicBlock *Done) {
  FastLockBlocks Fast;
  Fast.CheckTop = newBlock(F, "jitlock.enter.top", Done);
  Fast.Cas = newBlock(F, "jitlock.enter.cas", Done);
  Fast.Push = newBlock(F, "jitlock.enter.push", Done);
  Fast.Inflated = newBlock(F, "jitlock.enter.inflated", Done);
  if (Reserved) {
    Fast.ReservedPush = newBlock(F, "jitlock.enter.reserved", Fast.CheckTop);
    Fast.Unreserved = newBlock(F, "jitlock.enter.unreserved", Fast.CheckTop);
  }
  return Fast;
}

Value *MonitorLowering::emitFastLock(IRBuilder<> &B, const FastLockBlocks &Fast,
                                     Value *Obj, Value *Thread,
                                     Value *HeaderAddr, Value *H,
                                     Value *TopAddr, Value *Top,
                                     BasicBlock *Slow, BasicBlock *Done) {
  // E3: bit 1 set means a monitor (10) or the embedder's state (11).
  Value *NotLockable = B.CreateICmpNE(B.CreateAnd(H, L.monitor_value),
                                      B.getInt64(0), "jitlock.has.monitor");
  branch(B, NotLockable, Fast.Inflated, Fast.CheckTop, Unlikely);

  // E4: the top entry (the sentinel when empty) is obj: recursion, no atomic.
  B.SetInsertPoint(Fast.CheckTop);
  Value *Slot = byteAddr(B, Thread, B.CreateZExt(Top, I64), "jitlock.slot");
  Value *TopEntry = loadRelaxed(B, Ptr, byteAddr(B, Slot, -8, "jitlock.prev"),
                                "jitlock.top.entry");
  Value *IsRecursive = B.CreateICmpEQ(TopEntry, Obj, "jitlock.recursive");
  if (Reserved) {
    // E5 takes only a header whose field is 0. A reservable one: R2 below.
    // Reserved to another thread (R3), or fast-locked: the runtime.
    Function *F = B.GetInsertBlock()->getParent();
    BasicBlock *NotRecursive =
        newBlock(F, "jitlock.enter.not.recursive", Fast.Cas);
    BasicBlock *CheckReservable =
        newBlock(F, "jitlock.enter.reservable", Fast.Cas);
    BasicBlock *Reserve = newBlock(F, "jitlock.enter.reserve", Fast.Cas);
    B.CreateCondBr(IsRecursive, Fast.Push, NotRecursive);
    B.SetInsertPoint(NotRecursive);
    Value *Field = B.CreateAnd(H, L.reserve_mask, "jitlock.reserve");
    Value *Unreserved = B.CreateICmpEQ(Field, B.getInt64(L.unlocked_value),
                                       "jitlock.unreserved");
    branch(B, Unreserved, Fast.Cas, CheckReservable, Likely);
    // R2: reservable and unlocked, and this thread may reserve (its tag is
    // not ~0): CAS the field to the tag, acquire, as E5 does; then the push.
    // A failed CAS: the runtime.
    B.SetInsertPoint(CheckReservable);
    Value *Reservable =
        B.CreateICmpEQ(Field, B.getInt64(L.unlocked_value | L.reservable_value),
                       "jitlock.reservable");
    Value *MayReserve = B.CreateICmpNE(Fast.Tag, B.getInt64(~uint64_t(0)),
                                       "jitlock.may.reserve");
    branch(B, B.CreateAnd(Reservable, MayReserve), Reserve, Slow, Likely);
    B.SetInsertPoint(Reserve);
    Value *ToSelf = B.CreateOr(B.CreateAnd(H, ~L.reserve_mask), Fast.Tag,
                               "jitlock.reserved");
    Value *Pair = cas(B, HeaderAddr, H, ToSelf, AtomicOrdering::Acquire,
                      "jitlock.reserve.cas");
    branch(B, B.CreateExtractValue(Pair, 1), Fast.Push, Slow, Likely);
  } else {
    B.CreateCondBr(IsRecursive, Fast.Push, Fast.Cas);
  }

  // E5: CAS 01 -> 00. Acquire: this is the acquisition, and the critical
  // section must not move above it. Failure needs no ordering: we retry in
  // the runtime.
  B.SetInsertPoint(Fast.Cas);
  Value *Unlocked = B.CreateOr(H, L.unlocked_value, "jitlock.expected");
  Value *Locked = B.CreateAnd(H, ~L.lock_mask, "jitlock.desired");
  Value *Pair = cas(B, HeaderAddr, Unlocked, Locked, AtomicOrdering::Acquire,
                    "jitlock.cas");
  branch(B, B.CreateExtractValue(Pair, 1), Fast.Push, Slow, Likely);

  B.SetInsertPoint(Fast.Push);
  emitPush(B, Obj, Slot, TopAddr, Top);
  B.CreateBr(Done);

  // Bit 1 was set: only a monitor (exactly 10) goes on to M1.
  B.SetInsertPoint(Fast.Inflated);
  return isMonitor(B, H);
}

void MonitorLowering::lowerExit(CallBase &CB) {
  Function *F = CB.getFunction();
  BasicBlock *Head = CB.getParent();
  BasicBlock *Done = splitAt(CB, "jitlock.exit.done");
  BasicBlock *Pop = newBlock(F, "jitlock.exit.pop", Done);
  BasicBlock *Unlock = newBlock(F, "jitlock.exit.unlock", Done);
  BasicBlock *Cas = newBlock(F, "jitlock.exit.cas", Done);
  BasicBlock *Restore = newBlock(F, "jitlock.exit.restore", Done);
  BasicBlock *Inflated = newBlock(F, "jitlock.exit.inflated", Done);
  BasicBlock *Release = newBlock(F, "jitlock.exit.release", Done);
  BasicBlock *Slow = newBlock(F, "jitlock.exit.slow", Done);
  BasicBlock *Queued = newBlock(F, "jitlock.exit.queued", Done);

  IRBuilder<> B(Head);
  auto [Obj, Thread, HeaderAddr] = operandsOf(B, CB);
  // X1: is obj the top entry?
  Value *TopAddr =
      byteAddr(B, Thread, L.lock_stack_top_offset, "jitlock.top.addr");
  Value *Top = loadRelaxed(B, I32, TopAddr, "jitlock.top");
  Value *NewTop = B.CreateSub(Top, B.getInt32(8), "jitlock.top.popped");
  Value *TopSlot =
      byteAddr(B, Thread, B.CreateZExt(NewTop, I64), "jitlock.top.slot");
  Value *TopEntry = loadRelaxed(B, Ptr, TopSlot, "jitlock.top.entry");
  // In heavy mode the object is expected to have a monitor: the same test,
  // with the monitor path (N1-N3) laid out inline.
  branch(B, B.CreateICmpEQ(TopEntry, Obj, "jitlock.on.top"), Pop, Inflated,
         Heavy ? Unlikely : Likely);

  // X2-X3: pop; if the entry below (the sentinel when none) is obj too, this
  // was a recursive exit and nothing else changes.
  B.SetInsertPoint(Pop);
  storeRelaxed(B, NewTop, TopAddr);
  Value *Below = loadRelaxed(B, Ptr, byteAddr(B, TopSlot, -8, "jitlock.below"),
                             "jitlock.below.entry");
  B.CreateCondBr(B.CreateICmpEQ(Below, Obj, "jitlock.recursive"), Done, Unlock);

  // X4: CAS 00 -> 01, release: the critical section's writes must be visible
  // to the next thread that acquires.
  B.SetInsertPoint(Unlock);
  Value *H = loadRelaxed(B, I64, HeaderAddr, "jitlock.header");
  if (Reserved) {
    // R4: after the pop and X3, still reserved to this thread: done, no
    // atomic. Revoked while held (fast-locked now), or fast-locked all
    // along: X4.
    BasicBlock *Revoked = newBlock(F, "jitlock.exit.unreserved", Cas);
    branch(B, isReservedToSelf(B, H, Thread), Done, Revoked, Likely);
    B.SetInsertPoint(Revoked);
  }
  Value *IsFast = B.CreateICmpEQ(B.CreateAnd(H, L.lock_mask),
                                 B.getInt64(L.locked_value), "jitlock.is.fast");
  branch(B, IsFast, Cas, Restore, Likely);
  B.SetInsertPoint(Cas);
  Value *Pair = cas(B, HeaderAddr, H, B.CreateOr(H, L.unlocked_value),
                    AtomicOrdering::Release, "jitlock.cas");
  branch(B, B.CreateExtractValue(Pair, 1), Done, Restore, Likely);

  // A contender inflated it, or a hash was installed: push obj back so that
  // the runtime sees the state from before the exit.
  B.SetInsertPoint(Restore);
  storeRelaxed(B, Top, TopAddr);
  B.CreateBr(Slow);

  // N1: an inflated object (exactly 10)...
  B.SetInsertPoint(Inflated);
  Value *IH = loadRelaxed(B, I64, HeaderAddr, "jitlock.header.inflated");
  Value *IsMonitor =
      B.CreateICmpEQ(B.CreateAnd(IH, L.lock_mask), B.getInt64(L.monitor_value),
                     "jitlock.is.monitor");
  BasicBlock *CheckOwner = newBlock(F, "jitlock.exit.monitor", Release);
  BasicBlock *Owned = newBlock(F, "jitlock.exit.owned", Release);
  BasicBlock *RecDec = newBlock(F, "jitlock.exit.monitor.recursive", Release);
  branch(B, IsMonitor, CheckOwner, Slow, Likely);
  // N2: the owner first. Relaxed: only this thread stores itself there, so
  // seeing self means it owns the monitor, and nobody else changes the word
  // until it lets go. Anything else (another owner, an anonymous one, a
  // deflater): the runtime.
  B.SetInsertPoint(CheckOwner);
  auto [Mon, Self, OwnerAddr, Owner] =
      readOwner(B, IH, Obj, Thread, Slow, Owned, "jitlock.exit.monitor",
                /*ForExit=*/true);
  branch(B, B.CreateICmpEQ(Owner, Self, "jitlock.owner.is.self"), Owned, Slow,
         Likely);
  // With no recursion, N3; with some, one recursion less, inline: only the
  // owner writes the count.
  B.SetInsertPoint(Owned);
  Value *RecAddr = monitorField(B, Mon, L.monitor_recursions_offset,
                                "jitlock.recursions.addr");
  Value *Rec = loadRelaxed(B, I64, RecAddr, "jitlock.recursions");
  branch(B, B.CreateICmpEQ(Rec, B.getInt64(0), "jitlock.no.recursion"), Release,
         RecDec, Likely);
  B.SetInsertPoint(RecDec);
  storeRelaxed(B, B.CreateSub(Rec, B.getInt64(1), "jitlock.recursions.next"),
               RecAddr);
  B.CreateBr(Done);

  // N3: store 0, release, so that the critical section's writes go first;
  // then the barrier; then the entry count. Nonzero: threads are queued, and
  // the runtime wakes one (the monitor is already released, so the call is
  // exit_queued, not exit). exit=fence: a full fence. exit=store: a
  // single-thread fence, which emits no instruction but keeps the compiler
  // from moving the relaxed load above the release store (LLVM may, and the
  // membarrier argument of N3 needs program order); the runtime's exit has
  // its atomic_signal_fence for the same reason.
  B.SetInsertPoint(Release);
  B.CreateAlignedStore(B.getInt64(0), OwnerAddr, Align(8))
      ->setAtomic(AtomicOrdering::Release);
  B.CreateFence(AtomicOrdering::SequentiallyConsistent,
                Exit == InflatedExit::Fence ? SyncScope::System
                                            : SyncScope::SingleThread);
  Value *Entries =
      loadRelaxed(B, I32,
                  monitorField(B, Mon, L.monitor_entry_count_offset,
                               "jitlock.entry.count.addr"),
                  "jitlock.entry.count");
  branch(B, B.CreateICmpEQ(Entries, B.getInt32(0), "jitlock.none.queued"), Done,
         Queued, Likely);

  emitSlowCall(B, Slow, Done, /*Enter=*/false, Thread, Obj);
  B.SetInsertPoint(Queued);
  createCallIn(B, runtimeEntry("jitlock_rt_monitor_exit_queued_slow"),
               {Thread, Obj}, Pad)
      ->addFnAttr(Attribute::Cold);
  B.CreateBr(Done);

  CB.eraseFromParent();
  ++NumExitsInlined;
  NumReservedInlined += Reserved;
}

MonitorLowering::MonitorRef MonitorLowering::findMonitor(
    IRBuilder<> &B, Value *H, Value *Obj, Value *Thread, BasicBlock *Slow,
    BasicBlock *Before, const Twine &Step, bool ForExit) {
  MonitorRef Mon;
  switch (Storage) {
  case MonitorStorage::Pointer:
    // m = h - 10, folded into each field's offset.
    Mon.Tagged = H;
    return Mon;
  case MonitorStorage::Index: {
    // m = base + (h >> shift) * stride: the index names a slot of the
    // monitor region, which never moves. The base is the same for every
    // attached thread and 0 on one that is not: the enter never gets here
    // then (E2), but the exit does, and leaves that to the runtime.
    Value *Base = loadRelaxed(
        B, Ptr,
        byteAddr(B, Thread, L.monitor_base_offset, "jitlock.monitor.base.addr"),
        "jitlock.monitor.base");
    if (ForExit) {
      BasicBlock *HasBase =
          newBlock(B.GetInsertBlock()->getParent(), Step + ".indexed", Before);
      branch(B, B.CreateIsNotNull(Base, "jitlock.monitor.base.known"), HasBase,
             Slow, Likely);
      B.SetInsertPoint(HasBase);
    }
    Value *Index =
        B.CreateLShr(H, L.monitor_index_shift, "jitlock.monitor.index");
    Value *Offset = B.CreateMul(Index, B.getInt64(L.monitor_stride),
                                "jitlock.monitor.offset");
    Mon.Address = byteAddr(B, Base, Offset, "jitlock.monitor");
    return Mon;
  }
  case MonitorStorage::Table: {
    // Unrolled probes of the first monitor_cache_probes entries {object,
    // monitor}; the first whose object is obj gives m, loaded in a block of
    // its own. A miss: the runtime, which finds m in its table and fills the
    // cache.
    Function *F = B.GetInsertBlock()->getParent();
    BasicBlock *Found = newBlock(F, Step + ".found", Before);
    PHINode *Monitor =
        PHINode::Create(Ptr, L.monitor_cache_probes, "jitlock.monitor", Found);
    for (uint32_t I = 0; I != L.monitor_cache_probes; ++I) {
      bool Last = I + 1 == L.monitor_cache_probes;
      BasicBlock *Hit = newBlock(F, Step + ".hit" + Twine(I), Found);
      BasicBlock *Next =
          Last ? Slow : newBlock(F, Step + ".probe" + Twine(I + 1), Found);
      int64_t EntryOffset = int64_t(L.monitor_cache_offset) + 16 * int64_t(I);
      Value *Cached = loadRelaxed(
          B, Ptr, byteAddr(B, Thread, EntryOffset, "jitlock.cache.entry"),
          "jitlock.cache.object");
      Value *IsHit = B.CreateICmpEQ(Cached, Obj, "jitlock.cache.hit");
      // Only the miss of the last probe leaves the fast path.
      if (Last)
        branch(B, IsHit, Hit, Next, Likely);
      else
        B.CreateCondBr(IsHit, Hit, Next);
      B.SetInsertPoint(Hit);
      Monitor->addIncoming(loadRelaxed(B, Ptr,
                                       byteAddr(B, Thread, EntryOffset + 8,
                                                "jitlock.cache.monitor.addr"),
                                       "jitlock.cache.monitor"),
                           Hit);
      B.CreateBr(Found);
      B.SetInsertPoint(Next);
    }
    B.SetInsertPoint(Found);
    Mon.Address = Monitor;
    return Mon;
  }
  }
  llvm_unreachable("unknown monitor storage");
}

void MonitorLowering::lowerToRuntimeCall(CallBase &CB, bool Enter) {
  IRBuilder<> B(&CB);
  Value *Obj = objectPointer(B, CB.getArgOperand(0));
  createCallIn(B, slowPath(Enter), {currentThread(B), Obj}, Pad);
  CB.eraseFromParent();
  ++NumRuntimeCalls;
}

} // namespace

PreservedAnalyses LowerMonitorsPass::run(Module &M,
                                         ModuleAnalysisManager &MAM) {
  // Elided markers that jitlock-deopt-state did not consume (jitlock-elide
  // run without it) never reach code generation.
  bool ErasedMarkers = eraseElidedMarkers(M);
  Function *EnterFn = M.getFunction(MonitorEnterName);
  Function *ExitFn = M.getFunction(MonitorExitName);
  if (!EnterFn && !ExitFn)
    return ErasedMarkers ? preservedByLowering() : PreservedAnalyses::all();

  const ResolvedConfig *Resolved = getResolvedConfig(M, MAM, Config);
  if (!Resolved)
    return PreservedAnalyses::all();

  // Collect first: lowering splits blocks. The runtime never unwinds, so an
  // invoke is a call followed by a branch to its normal destination.
  struct MonitorOp {
    CallBase *CB;
    bool Enter;
    Instruction *Pad = nullptr;
  };
  SmallVector<MonitorOp, 16> Ops;
  for (Function *Fn : {EnterFn, ExitFn}) {
    if (!Fn)
      continue;
    // One entry per call: a call may also use the function as an operand.
    SmallSetVector<CallBase *, 16> Calls;
    for (Use &U : Fn->uses())
      if (auto *CB = dyn_cast<CallBase>(U.getUser());
          CB && CB->isCallee(&U) && isWellFormedCall(*CB, Fn->getName()))
        Calls.insert(CB);
    for (CallBase *CB : Calls) {
      if (auto *II = dyn_cast<InvokeInst>(CB))
        CB = changeToCall(II);
      if (isa<CallInst>(CB))
        Ops.push_back({CB, Fn == EnterFn});
    }
  }
  // Each operation's funclet, while all of them are in their own blocks.
  FuncletColors Funclets;
  for (MonitorOp &Op : Ops)
    Op.Pad = Funclets.padOf(*Op.CB);

  MonitorLowering Lowering(M, *Resolved);
  for (auto [CB, Enter, Pad] : Ops) {
    Function &F = *CB->getFunction();
    OptimizationRemarkEmitter ORE(&F);
    if (Resolved->Thread == ThreadMode::Arg)
      if (const char *Problem = threadParameterProblem(F)) {
        reportError(*CB, Problem);
        continue;
      }
    Lowering.setFunclet(Pad);
    // A constant null object: the inline path would fault on the header
    // load, while the runtime reports JITLOCK_ENULL (docs/robustness.md).
    if (auto *C = dyn_cast<Constant>(CB->getArgOperand(0)->stripPointerCasts());
        C && C->isNullValue()) {
      reportWarning(*CB, Twine(Enter ? "monitor enter" : "monitor exit") +
                             " of a null object: lowered to the runtime "
                             "call alone, which reports JITLOCK_ENULL");
      Lowering.lowerToRuntimeCall(*CB, Enter);
      continue;
    }

    StringRef What = Enter ? "monitor enter" : "monitor exit";
    if (!Resolved->Inline) {
      ORE.emit([&] {
        return OptimizationRemarkMissed("jitlock", "RuntimeCall", CB)
               << What << " in '" << ore::NV("Function", F.getName())
               << "' sent to the runtime: inline fast paths are "
                  "disabled (no-inline)";
      });
      Lowering.lowerToRuntimeCall(*CB, Enter);
      continue;
    }
    ORE.emit([&] {
      OptimizationRemark R("jitlock", "Inlined", CB);
      R << What << " in '" << ore::NV("Function", F.getName())
        << "' lowered to an inline fast path";
      if (Enter && Resolved->Locking == LockingMode::Heavy)
        R << " (heavy locking: the monitor path only; no fast lock, no "
             "lock-stack push)";
      if (Resolved->Locking == LockingMode::Reserved)
        R << " (reserved locking: the reserving thread's path has no "
             "atomic)";
      if (Resolved->Monitors == MonitorStorage::Index)
        R << " (monitors=index: the monitor at the thread's monitor base "
             "plus the header's index times "
          << ore::NV("Stride", Resolved->Layout.monitor_stride) << ")";
      else if (Resolved->Monitors == MonitorStorage::Table)
        R << " (monitors=table: the monitor from "
          << ore::NV("Probes", Resolved->Layout.monitor_cache_probes)
          << " probes of the thread's monitor cache)";
      return R;
    });
    LLVM_DEBUG(dbgs() << "jitlock: lowering " << What << " in " << F.getName()
                      << ": " << *CB << "\n");
    if (Enter)
      Lowering.lowerEnter(*CB);
    else
      Lowering.lowerExit(*CB);
  }
  for (Function *Fn : {EnterFn, ExitFn})
    if (Fn && Fn->use_empty())
      Fn->eraseFromParent();

  // Stamp the layout compiled in, so that a JIT can refuse a mismatch.
  stampLoweredLayout(M, Resolved->Layout);
  return preservedByLowering();
}

} // namespace jitlock
