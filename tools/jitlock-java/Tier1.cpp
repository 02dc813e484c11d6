//===- Tier1.cpp - Tier 1: bytecode to LLVM IR, compiled by ORC LLJIT -----===//
//
// A hot method is translated, bytecode by bytecode, into one LLVM function
// of the entry signature (VM.h): i64 (ptr %thread, ptr %method, ptr %args).
// The translation mirrors tier 0 (Interpreter.cpp) so that both tiers do the
// same thing, observably:
//  * Every local and every operand-stack slot is an i64 alloca, indexed by
//    the depth the stack has at that bytecode (the same on every path, as
//    JVMS 4.10 requires); a long takes two slots, its value in the first, as
//    in tier 0. simplifySlots (Inliner.h) makes them SSA values before the
//    O2 pipeline.
//  * monitorenter and a synchronized method's entry call
//    jitlock.monitor.enter, monitorexit and every exit of a synchronized
//    method jitlock.monitor.exit: the lowering makes them the inline fast
//    paths (E1-E5, X1-X3) with the runtime on their slow paths.
//  * Backward branches and returns call jitlock.safepoint.poll, as tier 0
//    polls there. Every function is "jitlock-stack-bang" (the watermark
//    check); below that, an explicit test against the thread's safe limit
//    throws StackOverflowError as tier 0's entry does, before the frame
//    takes any monitor.
//  * Exceptions are explicit: a helper or a callee that throws leaves
//    VMThread::Pending set; the code tests it after each call that can throw
//    and branches to the bytecode's dispatch block, which tries the
//    exception-table entries covering that bytecode in order, then leaves
//    the method (releasing a synchronized method's monitor) returning 0 with
//    the exception still pending. Null, bounds, division and cast checks are
//    compares that branch to a helper that sets Pending.
//  * Calls load the callee's Entry and call it: compiled code calls
//    interpreted code, and the other way round, through the same pointer.
//
// Constant-pool references are resolved at compile time with tier 0's
// resolvers; one that does not resolve (or a shape tier 1 does not take)
// refuses the compilation, and the method stays in tier 0, which throws at
// the right moment. Compilation runs on the thread that made the method
// hot, under one lock, into one LLJIT for the VM.
//
//===----------------------------------------------------------------------===//
#include "Tier1.h"
#include "Bytecodes.h"
#include "Deoptimize.h"
#include "Dependencies.h"
#include "Inliner.h"
#include "PassSetup.h"
#include "Profile.h"
#include "VM.h"

#include "jitlock/Deopt.h"
#include "jitlock/Passes.h"
#include "jitlock/RuntimeSymbols.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

using namespace llvm;

namespace jitlock::java {

using namespace bytecode;

uint32_t Tier1InvocationThreshold = 0, Tier1BackEdgeThreshold = 0;

namespace {

Tier1Options Opts;

//===-- Runtime helpers the compiled code calls ---------------------------===//
//
// Each sets T->Pending when it fails; the code tests the result or Pending.

/// Messages of the exceptions compiled code throws; they live as long as
/// the code.
std::deque<std::string> Messages;

const char *keep(std::string S) {
  Messages.push_back(std::move(S));
  return Messages.back().c_str();
}

void helperThrow(VMThread *T, const char *ClassName, const char *Msg) {
  if (Msg)
    throwNew(T, ClassName, Msg);
  else
    throwNew(T, ClassName);
}

void helperThrowIndex(VMThread *T, int32_t Index, int32_t Length) {
  throwIndexOutOfBounds(T, Index, Length);
}

bool helperInitialize(VMThread *T, Class *K) { return initializeClass(T, K); }

Object *helperNew(VMThread *T, Class *K) {
  if (!initializeClass(T, K))
    return nullptr;
  return allocObject(T, K);
}

Slot helperNewArray(VMThread *T, Class *ArrayClass, int32_t Length) {
  return Slot(uintptr_t(allocArray(T, ArrayClass, Length)));
}

Slot helperMultiNewArray(VMThread *T, Class *ArrayClass, Slot *Dims,
                         uint32_t N) {
  int32_t Counts[256];
  for (uint32_t D = 0; D < N; ++D) {
    Counts[D] = int32_t(Dims[D]);
    if (Counts[D] < 0) {
      throwNew(T, "java/lang/NegativeArraySizeException",
               std::to_string(Counts[D]));
      return 0;
    }
  }
  return Slot(uintptr_t(multiNewArray(T, ArrayClass, Counts, N)));
}

/// The method invokevirtual/invokeinterface calls, or null with
/// IncompatibleClassChangeError pending when the receiver's vtable is too
/// short for it (tier 0 checks the same).
Method *helperSelect(VMThread *T, Object *Receiver, Method *M, bool Virtual) {
  if (M->VtableIndex >= 0 && !M->Owner->isInterface() &&
      size_t(M->VtableIndex) >= Receiver->Cls->Vtable.size()) {
    throwNew(T, "java/lang/IncompatibleClassChangeError",
             Receiver->Cls->javaName() + " has no method " +
                 M->qualifiedName());
    return nullptr;
  }
  return Virtual ? selectVirtual(Receiver, M) : M;
}

bool helperIsInstance(Object *O, Class *K) { return isInstanceOf(O, K); }

void helperThrowCast(VMThread *T, Object *O, Class *K) {
  throwNew(T, "java/lang/ClassCastException",
           "class " + O->Cls->javaName() + " cannot be cast to class " +
               K->javaName());
}

/// Whether `V` may be stored into the array `A`; throws ArrayStoreException
/// if not.
bool helperCheckStore(VMThread *T, Object *V, Array *A) {
  if (isAssignable(V->Cls, A->Cls->Elem))
    return true;
  throwNew(T, "java/lang/ArrayStoreException", V->Cls->javaName());
  return false;
}

Slot helperInvokeDynamic(VMThread *T, Class *C, uint32_t CpIndex, Slot *Args) {
  return invokeDynamic(T, C, CpIndex, Args);
}

/// Whether the pending exception is an instance of the catch type; when the
/// type does not resolve, its NoClassDefFoundError replaces the exception
/// (as in tier 0) and the answer is no.
bool helperCatches(VMThread *T, Class *C, uint32_t CatchType) {
  Object *Ex = T->Pending;
  Class *K = resolveClassRef(T, C, CatchType);
  if (!K)
    return false;
  return isInstanceOf(Ex, K);
}

//===-- Offsets of the VM's structures that compiled code reads -----------===//

template <typename S, typename F> uint64_t offsetIn(F S::*Member) {
  alignas(S) static char Storage[sizeof(S)];
  auto *P = reinterpret_cast<S *>(Storage);
  return uint64_t(reinterpret_cast<char *>(&(P->*Member)) - Storage);
}

uint64_t PendingOffset, SafeLimitOffset, EntryOffset, ElemKindOffset;

/// The allocator tier 1's `new` calls by name (Translator::allocate).
const char *const NewObjectName = "jitlock_java_new";

// The jitlock interface (include/jitlock/Passes.h).
constexpr const char *MonitorEnterName = "jitlock.monitor.enter";
constexpr const char *MonitorExitName = "jitlock.monitor.exit";
constexpr const char *SafepointPollName = "jitlock.safepoint.poll";

//===-- The translator ----------------------------------------------------===//

inline uint16_t u2(const uint8_t *P) { return uint16_t(P[0] << 8 | P[1]); }
inline int16_t s2(const uint8_t *P) { return int16_t(u2(P)); }
inline int32_t s4(const uint8_t *P) {
  return int32_t(uint32_t(P[0]) << 24 | uint32_t(P[1]) << 16 |
                 uint32_t(P[2]) << 8 | uint32_t(P[3]));
}

class Translator {
public:
  /// Translates `M` into a new function `Name` of `Mod`. `Outer` is the
  /// translator whose call `M` is inlined into (null for the compiled
  /// method): then the function is an inline body (see InlineBody).
  Translator(VMThread *T, Method *M, Module &Mod, StringRef Name,
             const Translator *Outer = nullptr)
      : VT(T), M(M), C(M->Owner), Code(M->Code.data()), Len(M->Code.size()),
        Ctx(Mod.getContext()), Mod(Mod), B(Ctx), I64(B.getInt64Ty()),
        I32(B.getInt32Ty()), Ptr(B.getPtrTy()), Outer(Outer),
        Depth(Outer ? Outer->Depth + 1 : 0) {
    Type *Ret =
        Outer ? static_cast<Type *>(StructType::get(I64, B.getInt1Ty())) : I64;
    F = Function::Create(FunctionType::get(Ret, {Ptr, Ptr, Ptr}, false),
                         Outer ? Function::InternalLinkage
                               : Function::ExternalLinkage,
                         Name, Mod);
    if (Outer)
      F->addFnAttr(InlineBodyAttr);
  }

  ~Translator() {
    // The blocks of instructions no path reaches (javac leaves none, but a
    // class file may), or none had reached when the method was refused.
    for (BasicBlock *BB : Blocks)
      if (BB && !BB->getParent())
        delete BB;
  }

  /// Builds the function, or says why it cannot (why() not empty): then
  /// the function is left incomplete, for the caller to discard.
  void run();
  const std::string &why() const { return Why; }
  /// Whether the code has an uncommon trap (then it must be entered
  /// through deoptimizableEntry).
  bool mayTrap() const { return NumTraps != 0; }
  /// The record of this compilation, which its dependencies invalidate
  /// (set before run(), on the compiled method's translator).
  void setCompiledCode(CompiledCode *Code) { Compiled = Code; }

private:
  VMThread *VT; // the compiling thread, for resolution
  Method *M;
  Class *C;
  const uint8_t *Code;
  size_t Len;
  LLVMContext &Ctx;
  Module &Mod;
  IRBuilder<> B;
  Type *I64, *I32;
  PointerType *Ptr;
  Function *F;
  /// The inline chain: the translator of the method this one's is inlined
  /// into, and how deep it is (0: the compiled method).
  const Translator *Outer;
  unsigned Depth;
  unsigned InlineCount = 0;
  Value *Thread = nullptr, *SyncObj = nullptr;
  std::vector<AllocaInst *> Locals, Stack;
  std::vector<BasicBlock *> Blocks; // by bytecode offset
  /// What tier 1 knows of the frame at a bytecode, for structured locking:
  /// an id per local and stack slot naming the bytecode that made its value
  /// (so a value keeps its id through loads, stores and dups), and the ids
  /// of the monitors the method entered and holds, innermost last.
  struct FrameState {
    std::vector<int> Locals, Stack, Held;
  };
  std::vector<std::unique_ptr<FrameState>> States; // by offset, on entry
  std::vector<int> LocalIds, StackIds, Held;       // at the current point
  std::vector<size_t> Work;
  std::map<size_t, BasicBlock *> Dispatch;
  BasicBlock *Unwind = nullptr; // leaves the method, exception pending
  int Sp = 0;
  size_t Pc = 0;
  std::string Why; // the first refusal
  unsigned NumTraps = 0;

  // Speculation (Deoptimize.h): the frames a trap describes, and the trap.
  struct VirtualFrame {
    Method *M;
    size_t Bci;
    ArrayRef<AllocaInst *> Locals, Stack; // Stack: the slots in use
    unsigned NumMonitors;
  };
  /// The frames of the inline chain at the current bytecode, outermost
  /// first; each frame's slots are allocas of its own translator's function.
  std::vector<VirtualFrame> virtualFrames() const;
  /// Appends the deopt operands of this function's frame (the chain's last)
  /// to `State`: its header, then its locals and stack.
  void appendFrameState(SmallVectorImpl<Value *> &State);
  void emitUncommonTrap(TrapReason Reason);
  BasicBlock *trapBlock(TrapReason Reason, int SpAtBytecode);
  void emitBranch(Value *Taken, size_t Target, size_t Next, int SpAtBytecode);

  // Lazy deoptimization (Dependencies.h): a virtual call inlined with no
  // class check is right only while its code is valid, so the compiled
  // method checks the code's Invalidated word after each point where other
  // code may have run, and traps there with the state after that point.
  CompiledCode *Compiled = nullptr; // the compiled method's translator's
  CompiledCode *compiledCode() const {
    return Outer ? Outer->compiledCode() : Compiled;
  }
  /// Other code may have run in the current bytecode (a call, a contended
  /// enter, a class initializer, an allocation), or anywhere in this
  /// translator's code (for an inline body: its caller checks after it).
  bool OtherCodeHere = false, OtherCodeAnywhere = false;
  void ranOtherCode() { OtherCodeHere = OtherCodeAnywhere = true; }
  /// Whether a virtual call was inlined with no class check.
  bool Unguarded = false;
  struct InvalidationCheck {
    Instruction *Word, *Test;
    BranchInst *Branch;
    BasicBlock *Valid, *Trap;
  };
  std::vector<InvalidationCheck> Checks;
  /// In the compiled method's code: traps with reason Dependency, resuming
  /// at `Bci` with the current locals, Sp stack slots and monitors, when
  /// the code was invalidated.
  void checkInvalidated(size_t Bci, int SpThere);
  void checkInvalidated(size_t Bci) { checkInvalidated(Bci, Sp); }
  /// After the translation: code with no unchecked inlining needs no
  /// checks (and no deoptimizable entry), so they go.
  void dropUnneededChecks();

  /// Refuses the method: translation stops at the current bytecode.
  void refuse(const std::string &Reason) {
    if (Why.empty())
      Why = "bytecode " + std::to_string(Pc) + " (" + opcodeName(Code[Pc]) +
            "): " + Reason;
  }
  bool failed() const { return !Why.empty(); }

  // Constants.
  Constant *ptr(const void *P) {
    return ConstantExpr::getIntToPtr(B.getInt64(uint64_t(uintptr_t(P))), Ptr);
  }
  Constant *str(std::string S) { return ptr(keep(std::move(S))); }
  template <typename R, typename... A>
  Value *callHelper(R (*Fn)(A...), ArrayRef<Value *> Args, Type *Ret) {
    SmallVector<Type *, 4> Params;
    for (Value *V : Args)
      Params.push_back(V->getType());
    FunctionType *FT = FunctionType::get(Ret, Params, false);
    return B.CreateCall(FT, ptr(reinterpret_cast<void *>(Fn)), Args);
  }

  // The operand stack: i64 slots.
  Value *slot(int I) { return B.CreateLoad(I64, Stack[I]); }
  /// The id of a value the current bytecode makes.
  int fresh() const { return int(Pc) + 1; }
  void setSlot(int I, Value *V, int Id = 0) {
    StackIds.at(I) = Id ? Id : fresh();
    if (V->getType()->isPointerTy())
      V = B.CreatePtrToInt(V, I64);
    else if (V->getType() != I64)
      V = B.CreateZExt(V, I64);
    B.CreateStore(V, Stack[I]);
  }
  void push(Value *V) { setSlot(Sp++, V); }
  void pushL(Value *V) {
    setSlot(Sp, V);
    Sp += 2;
  }
  Value *pop() { return slot(--Sp); }
  Value *popI() { return B.CreateTrunc(pop(), I32); }
  Value *popL() {
    Sp -= 2;
    return slot(Sp);
  }
  Value *popA() { return B.CreateIntToPtr(pop(), Ptr); }
  Value *local(unsigned I) { return B.CreateLoad(I64, Locals.at(I)); }
  void setLocal(unsigned I, Value *V) { B.CreateStore(V, Locals.at(I)); }
  /// xload: pushes local I (two slots for a long) with its id.
  void pushLocal(unsigned I, bool Long) {
    int Id = LocalIds.at(I);
    setSlot(Sp, local(I), Id);
    Sp += Long ? 2 : 1;
  }
  /// xstore: pops into local I (a long makes local I+1 unusable).
  void storeLocal(unsigned I, bool Long) {
    Sp -= Long ? 2 : 1;
    LocalIds.at(I) = StackIds[Sp];
    if (Long)
      LocalIds.at(I + 1) = fresh();
    setLocal(I, slot(Sp));
  }
  /// The dup family and swap: pops `Count` slots and pushes them again in
  /// the order `Order` gives (0 is the old top), values and ids alike.
  void shuffle(int Count, std::initializer_list<int> Order) {
    SmallVector<Value *, 4> Vals;
    SmallVector<int, 4> Ids;
    for (int K = 0; K < Count; ++K) {
      Vals.push_back(slot(Sp - 1 - K));
      Ids.push_back(StackIds[Sp - 1 - K]);
    }
    Sp -= Count;
    for (int K : Order) {
      setSlot(Sp, Vals[K], Ids[K]);
      ++Sp;
    }
  }

  // Control flow.
  /// Records the frame state a path brings to `Target`: the first path's,
  /// and any other must hold the same monitors, kept in the same places.
  void enqueue(size_t Target, FrameState In) {
    if (failed())
      return;
    if (Target >= Len || !Blocks[Target]) {
      refuse("branch target " + std::to_string(Target) +
             " is not an instruction");
      return;
    }
    std::unique_ptr<FrameState> &Old = States[Target];
    if (!Old) {
      Old = std::make_unique<FrameState>(std::move(In));
      Work.push_back(Target);
      return;
    }
    if (Old->Stack.size() != In.Stack.size()) {
      refuse("the stack depth at " + std::to_string(Target) +
             " differs between paths");
      return;
    }
    if (Old->Held != In.Held)
      return refuse("paths reach " + std::to_string(Target) +
                    " holding different monitors (unstructured locking)");
    auto Check = [&](const std::vector<int> &Was, const std::vector<int> &Now) {
      for (size_t K = 0; K < Was.size(); ++K)
        if (Was[K] != Now[K] && llvm::is_contained(Old->Held, Was[K]))
          refuse("a monitor's object is not in the same place on every "
                 "path to " +
                 std::to_string(Target) + " (unstructured locking)");
    };
    Check(Old->Locals, In.Locals);
    Check(Old->Stack, In.Stack);
  }
  FrameState here() const {
    return {LocalIds, std::vector<int>(StackIds.begin(), StackIds.begin() + Sp),
            Held};
  }
  void enqueue(size_t Target) { enqueue(Target, here()); }
  void jump(size_t Target) {
    enqueue(Target);
    if (failed())
      return;
    B.CreateBr(Blocks[Target]);
  }
  BasicBlock *newBlock(const Twine &Name) {
    return BasicBlock::Create(Ctx, Name, F);
  }
  BasicBlock *dispatchBlock();
  /// Continues in a new block when `Fail` is false, else goes to the
  /// dispatch block (an exception is pending).
  void branchToDispatchIf(Value *Fail) {
    BasicBlock *Ok = newBlock("ok");
    B.CreateCondBr(Fail, dispatchBlock(), Ok);
    B.SetInsertPoint(Ok);
  }
  void checkPending() {
    Value *P = B.CreateLoad(Ptr, B.CreateConstInBoundsGEP1_64(
                                     B.getInt8Ty(), Thread, PendingOffset));
    branchToDispatchIf(B.CreateIsNotNull(P));
  }
  /// When `Bad`, throws ClassName(Msg) in this bytecode.
  void throwIf(Value *Bad, const char *ClassName, const std::string &Msg) {
    BasicBlock *Throw = newBlock("throw"), *Ok = newBlock("ok");
    B.CreateCondBr(Bad, Throw, Ok);
    B.SetInsertPoint(Throw);
    callHelper(helperThrow, {Thread, ptr(ClassName), str(Msg)}, B.getVoidTy());
    B.CreateBr(dispatchBlock());
    B.SetInsertPoint(Ok);
  }
  void nullCheck(Value *Obj, const std::string &Msg) {
    throwIf(B.CreateIsNull(Obj), "java/lang/NullPointerException", Msg);
  }
  void ensureInitialized(Class *K) {
    if (K->Init.load() == InitState::Initialized)
      return; // never goes back
    Value *State = B.CreateLoad(B.getInt8Ty(), ptr(&K->Init));
    cast<LoadInst>(State)->setAtomic(AtomicOrdering::Acquire);
    BasicBlock *Init = newBlock("init"), *Done = newBlock("initialized");
    B.CreateCondBr(
        B.CreateICmpEQ(State, B.getInt8(uint8_t(InitState::Initialized))), Done,
        Init);
    B.SetInsertPoint(Init);
    ranOtherCode(); // the class initializer
    Value *Ok = callHelper(helperInitialize, {Thread, ptr(K)}, B.getInt1Ty());
    B.CreateCondBr(Ok, Done, dispatchBlock());
    B.SetInsertPoint(Done);
  }
  void poll() {
    B.CreateCall(Mod.getOrInsertFunction(
        SafepointPollName, FunctionType::get(B.getVoidTy(), {}, false)));
  }
  /// A backward branch's poll, which may run handshakes: then the check,
  /// whose trap resumes at the branch's target.
  void pollAndCheck(size_t Target) {
    poll();
    ranOtherCode();
    checkInvalidated(Target);
  }
  void monitor(const char *Name, Value *Obj) {
    B.CreateCall(Mod.getOrInsertFunction(
                     Name, FunctionType::get(B.getVoidTy(), {Ptr}, false)),
                 {Obj});
  }

  // Resolution at compile time, with tier 0's resolvers.
  template <typename R> R *resolved(R *Result, unsigned Index) {
    if (!Result) {
      // The class only: a message would run Java code (toString) while
      // this thread holds the compile lock.
      std::string What = VT->Pending ? VT->Pending->Cls->javaName()
                                     : std::string("unknown error");
      VT->Pending = nullptr;
      refuse("constant " + std::to_string(Index) + " does not resolve (" +
             What + ")");
    }
    return Result; // null when refused
  }
  Class *classRef(unsigned I) { return resolved(resolveClassRef(VT, C, I), I); }

  Value *elementAddr(Value *Arr, Value *Index, unsigned Size) {
    Value *Data =
        B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Arr, sizeof(java::Array));
    return B.CreateInBoundsGEP(B.getIntNTy(Size * 8), Data,
                               B.CreateSExt(Index, I64));
  }
  /// Pops index and array, checks both; returns the element's address.
  Value *arrayElement(unsigned Size, bool Store) {
    Value *Index = popI();
    Value *A = popA();
    nullCheck(A, Store ? "Cannot store to array because it is null"
                       : "Cannot load from array because it is null");
    Value *Length =
        B.CreateLoad(I32,
                     B.CreateConstInBoundsGEP1_64(
                         B.getInt8Ty(), A, offsetof(java::Array, Length)),
                     "length");
    BasicBlock *Throw = newBlock("index.throw"), *Ok = newBlock("index.ok");
    B.CreateCondBr(B.CreateICmpUGE(Index, Length), Throw, Ok);
    B.SetInsertPoint(Throw);
    callHelper(helperThrowIndex, {Thread, Index, Length}, B.getVoidTy());
    B.CreateBr(dispatchBlock());
    B.SetInsertPoint(Ok);
    LastArray = A;
    return elementAddr(A, Index, Size);
  }
  Value *LastArray = nullptr;

  /// A new instance of K, or null with an exception pending. A named call
  /// with a noalias result, so that jitlock-elide sees a fresh object.
  Value *allocate(Class *K) {
    FunctionCallee New = Mod.getOrInsertFunction(
        NewObjectName, FunctionType::get(Ptr, {Ptr, Ptr}, false));
    CallInst *O = B.CreateCall(New, {Thread, ptr(K)});
    O->addRetAttr(Attribute::NoAlias);
    return O;
  }

  Value *atomicLoad(Type *Ty, Value *Addr, bool Volatile) {
    LoadInst *L = B.CreateLoad(Ty, Addr);
    L->setAlignment(Align(Ty->getPrimitiveSizeInBits() / 8));
    L->setAtomic(Volatile ? AtomicOrdering::SequentiallyConsistent
                          : AtomicOrdering::Unordered);
    return L;
  }
  void atomicStore(Value *V, Value *Addr, bool Volatile) {
    StoreInst *S = B.CreateStore(V, Addr);
    S->setAlignment(Align(V->getType()->getPrimitiveSizeInBits() / 8));
    S->setAtomic(Volatile ? AtomicOrdering::SequentiallyConsistent
                          : AtomicOrdering::Unordered);
  }
  /// A field's value as tier 0's storeField narrows it.
  Value *narrowForField(Value *V, char D) {
    switch (D) {
    case 'Z':
      return B.CreateAnd(V, 1);
    case 'B':
      return B.CreateZExt(B.CreateSExt(B.CreateTrunc(V, B.getInt8Ty()), I32),
                          I64);
    case 'C':
      return B.CreateAnd(V, 0xffff);
    case 'S':
      return B.CreateZExt(B.CreateSExt(B.CreateTrunc(V, B.getInt16Ty()), I32),
                          I64);
    case 'I':
      return B.CreateAnd(V, 0xffffffffull);
    default:
      return V;
    }
  }

  void emitEntry();
  /// From the synchronized method's enter to the first bytecode.
  void emitBody();
  void emitInstruction();
  void emitReturn(uint8_t Op);
  void emitInvoke(uint8_t Op, unsigned Index);
  /// Leaves the function with `Result`; `Threw`: with an exception pending.
  void emitRet(Value *Result, bool Threw);
  /// The method being compiled (the outermost of the inline chain).
  Method *root() const { return Outer ? Outer->root() : M; }
  /// An inline body translated for `RM` (a call whose target is known to
  /// be RM), or null when RM is not inlined.
  Function *inlineBody(Method *RM);
  /// The method invokevirtual (`Virtual`) or invokespecial of `RM` on
  /// `Recv` runs, with the dispatch taken when there is none.
  Value *selectTarget(Value *Recv, Method *RM, bool Virtual);
  /// Calls `Target` (its Entry, or its inline body `Inline`) with `Args`,
  /// dispatching a pending exception; the result.
  Value *emitCall(Value *Target, Function *Inline, Value *Args);
  /// A virtual call of `RM` inlined while RM has one implementation: with
  /// no class check in the compiled method's code (lazy deoptimization
  /// keeps it right), behind one in an inline body.
  Value *emitChaCall(Value *Recv, Method *RM, Function *Inline, Value *Args);
  /// A virtual call of `RM` that runs `Target`'s inline body `Inline` when
  /// the receiver's class is `Expected`; another class takes the virtual
  /// call, or with `Trap` an uncommon trap (TrapReason::ClassCheck).
  Value *emitGuardedCall(Value *Recv, Method *RM, Class *Expected,
                         Method *Target, Function *Inline, Value *Args,
                         bool Trap);
  /// When the profile saw one receiver class at this invoke of `RM` (and
  /// speculation is on): that class in `K`, the method it runs in `Target`,
  /// and its inline body; else null.
  Function *profiledInlineBody(Method *RM, Class *&K, Method *&Target);
  void emitIntBinary(uint8_t Op);
  void emitLongBinary(uint8_t Op);
  void emitDivision(bool Long, bool Rem);
  Value *argsArray(unsigned N);
};

BasicBlock *Translator::dispatchBlock() {
  auto It = Dispatch.find(Pc);
  if (It != Dispatch.end())
    return It->second;
  IRBuilderBase::InsertPointGuard Guard(B);
  BasicBlock *D = newBlock("dispatch." + Twine(Pc));
  Dispatch[Pc] = D;
  B.SetInsertPoint(D);
  Value *PendingAddr =
      B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Thread, PendingOffset);
  bool CaughtAll = false;
  for (const ExceptionHandler &H : M->Handlers) {
    if (Pc < H.StartPc || Pc >= H.EndPc)
      continue;
    BasicBlock *Catch = newBlock("catch." + Twine(H.HandlerPc));
    BasicBlock *Next = newBlock("next");
    if (H.CatchType) {
      if (!classRef(H.CatchType)) // resolves now, or refuses
        return Unwind;
      Value *Yes =
          callHelper(helperCatches, {Thread, ptr(C), B.getInt32(H.CatchType)},
                     B.getInt1Ty());
      B.CreateCondBr(Yes, Catch, Next);
    } else {
      B.CreateBr(Catch);
      CaughtAll = true;
    }
    B.SetInsertPoint(Catch);
    Value *Ex = B.CreateLoad(Ptr, PendingAddr);
    B.CreateStore(ConstantPointerNull::get(Ptr), PendingAddr);
    B.CreateStore(B.CreatePtrToInt(Ex, I64), Stack.at(0));
    // The exception may be the first instance of its class: the compiled
    // method checks here, an inline body's caller after it.
    OtherCodeAnywhere = true;
    checkInvalidated(H.HandlerPc, 1);
    enqueue(H.HandlerPc, {LocalIds, {-int(H.HandlerPc) - 1}, Held});
    if (failed())
      return Unwind;
    B.CreateBr(Blocks[H.HandlerPc]);
    B.SetInsertPoint(Next);
    if (CaughtAll)
      break; // the later entries see nothing from here
  }
  if (!CaughtAll && !Held.empty())
    refuse("an exception can leave the method holding a monitor it entered "
           "(unstructured locking)");
  B.CreateBr(Unwind);
  return D;
}

Value *Translator::argsArray(unsigned N) {
  IRBuilderBase::InsertPointGuard Guard(B);
  B.SetInsertPoint(&F->getEntryBlock(), F->getEntryBlock().begin());
  return B.CreateAlloca(I64, B.getInt32(std::max(N, 1u)), "args");
}

void Translator::emitEntry() {
  BasicBlock *Entry = newBlock("entry");
  B.SetInsertPoint(Entry);
  Thread = F->getArg(0);
  Thread->setName("thread");
  F->getArg(1)->setName("method");
  F->getArg(2)->setName("argv");
  for (unsigned I = 0; I < M->MaxLocals; ++I)
    Locals.push_back(B.CreateAlloca(I64, nullptr, "l" + Twine(I)));
  for (unsigned I = 0; I < std::max<unsigned>(M->MaxStack, 1); ++I)
    Stack.push_back(B.CreateAlloca(I64, nullptr, "s" + Twine(I)));
  for (unsigned I = 0; I < M->ArgSlots; ++I)
    setLocal(I, B.CreateLoad(
                    I64, B.CreateConstInBoundsGEP1_64(I64, F->getArg(2), I)));

  if (Outer)
    return emitBody();
  // Tier 0's entry check: below the safe limit less the frame, a
  // StackOverflowError, which the callers' handlers and exits unwind.
  // The lowered watermark check comes before it and never reaches the
  // overflow handler on its own: its margin is smaller than this one.
  // An inline body runs in its caller's frame, whose check covers it (its
  // slots become SSA values) and goes straight to the body.
  uint64_t Reserve =
      (uint64_t(M->MaxLocals) + M->MaxStack + 1) * sizeof(Slot) + 1024;
  Value *Frame = B.CreatePtrToInt(
      B.CreateIntrinsic(Intrinsic::frameaddress, {Ptr}, {B.getInt32(0)}), I64);
  Value *Need = B.CreateSub(Frame, B.getInt64(Reserve));
  Value *Limit = B.CreateLoad(I64, B.CreateConstInBoundsGEP1_64(
                                       B.getInt8Ty(), Thread, SafeLimitOffset));
  BasicBlock *Overflow = newBlock("stack.overflow");
  BasicBlock *Body = newBlock("body");
  B.CreateCondBr(B.CreateICmpULE(Need, Limit), Overflow, Body,
                 MDBuilder(Ctx).createBranchWeights(1, 1000));
  B.SetInsertPoint(Overflow);
  callHelper(helperThrow,
             {Thread, ptr("java/lang/StackOverflowError"),
              ConstantPointerNull::get(Ptr)},
             B.getVoidTy());
  B.CreateRet(B.getInt64(0));

  B.SetInsertPoint(Body);
  emitBody();
}

void Translator::emitBody() {
  if (M->isSynchronized()) {
    if (M->isStatic()) {
      if (!C->Mirror) {
        refuse("the class has no mirror to synchronize on");
        return;
      }
      SyncObj = ptr(C->Mirror);
    } else {
      SyncObj = B.CreateIntToPtr(B.CreateLoad(I64, Locals[0]), Ptr, "this");
    }
    monitor(MonitorEnterName, SyncObj);
    ranOtherCode(); // a contended enter runs handshakes
    checkInvalidated(0, 0);
  }
  Unwind = newBlock("unwind");
  // The arguments' ids are below every bytecode's.
  LocalIds.assign(M->MaxLocals, 0);
  for (unsigned K = 0; K < M->MaxLocals; ++K)
    LocalIds[K] = -int(Len) - 1 - int(K);
  StackIds.assign(M->MaxStack + 2, 0);
  enqueue(0);
  B.CreateBr(Blocks[0]);
  B.SetInsertPoint(Unwind);
  if (SyncObj)
    monitor(MonitorExitName, SyncObj);
  emitRet(B.getInt64(0), /*Threw=*/true);
}

void Translator::emitRet(Value *Result, bool Threw) {
  if (!Outer) {
    B.CreateRet(Result);
    return;
  }
  Value *Pair = PoisonValue::get(F->getReturnType());
  Pair = B.CreateInsertValue(Pair, Result, 0);
  B.CreateRet(B.CreateInsertValue(Pair, B.getInt1(Threw), 1));
}

void Translator::run() {
  F->addFnAttr(StackBangAttr);
  F->addFnAttr("frame-pointer", "all");
  if (Len > 16384) {
    Why = "the method has " + std::to_string(Len) +
          " bytes of bytecode, more than tier 1's 16384";
    return;
  }
  // One block per instruction start (found the way the verifier walks).
  Blocks.assign(Len + 1, nullptr);
  States.resize(Len + 1);
  for (size_t P = 0; P < Len;) {
    Blocks[P] = BasicBlock::Create(Ctx, "bc" + Twine(P));
    uint8_t Op = Code[P];
    size_t N;
    if (Op == WIDE) {
      N = Code[P + 1] == IINC ? 6 : 4;
    } else if (Op == TABLESWITCH || Op == LOOKUPSWITCH) {
      size_t A = (P + 4) & ~size_t(3);
      N = Op == TABLESWITCH ? A + 12 +
                                  4 * size_t(int64_t(s4(&Code[A + 8])) -
                                             s4(&Code[A + 4]) + 1) -
                                  P
                            : A + 8 + 8 * size_t(s4(&Code[A + 4])) - P;
    } else {
      static const uint8_t Two[] = {BIPUSH, LDC,    NEWARRAY, ILOAD, LLOAD,
                                    ALOAD,  ISTORE, LSTORE,   ASTORE};
      static const uint8_t Five[] = {INVOKEINTERFACE, INVOKEDYNAMIC, GOTO_W};
      if (std::find(std::begin(Two), std::end(Two), Op) != std::end(Two))
        N = 2;
      else if (std::find(std::begin(Five), std::end(Five), Op) !=
               std::end(Five))
        N = 5;
      else if (Op == MULTIANEWARRAY)
        N = 4;
      else if (Op == SIPUSH || Op == LDC_W || Op == LDC2_W || Op == IINC ||
               (Op >= IFEQ && Op <= GOTO) || (Op >= GETSTATIC && Op <= 184) ||
               Op == NEW || Op == ANEWARRAY || Op == CHECKCAST ||
               Op == INSTANCEOF || Op == IFNULL || Op == IFNONNULL)
        N = 3;
      else
        N = 1;
    }
    P += N;
  }
  emitEntry();
  while (!Work.empty() && !failed()) {
    Pc = Work.back();
    Work.pop_back();
    const FrameState &S = *States[Pc];
    LocalIds = S.Locals;
    std::copy(S.Stack.begin(), S.Stack.end(), StackIds.begin());
    Sp = int(S.Stack.size());
    Held = S.Held;
    Blocks[Pc]->insertInto(F);
    B.SetInsertPoint(Blocks[Pc]);
    OtherCodeHere = false;
    emitInstruction();
  }
  if (!failed())
    dropUnneededChecks();
}

void Translator::emitIntBinary(uint8_t Op) {
  Value *R = popI(), *L = popI();
  Value *V;
  switch (Op) {
  case 96:
    V = B.CreateAdd(L, R);
    break;
  case 100:
    V = B.CreateSub(L, R);
    break;
  case 104:
    V = B.CreateMul(L, R);
    break;
  case 120:
    V = B.CreateShl(L, B.CreateAnd(R, 31));
    break;
  case 122:
    V = B.CreateAShr(L, B.CreateAnd(R, 31));
    break;
  case 124:
    V = B.CreateLShr(L, B.CreateAnd(R, 31));
    break;
  case 126:
    V = B.CreateAnd(L, R);
    break;
  case 128:
    V = B.CreateOr(L, R);
    break;
  default:
    V = B.CreateXor(L, R);
    break;
  }
  push(V);
}

void Translator::emitLongBinary(uint8_t Op) {
  // Shifts take an int count; the others two longs.
  bool Shift = Op == 121 || Op == 123 || Op == 125;
  Value *R = Shift ? B.CreateZExt(B.CreateAnd(popI(), 63), I64) : popL();
  Value *L = popL();
  Value *V;
  switch (Op) {
  case 97:
    V = B.CreateAdd(L, R);
    break;
  case 101:
    V = B.CreateSub(L, R);
    break;
  case 105:
    V = B.CreateMul(L, R);
    break;
  case 121:
    V = B.CreateShl(L, R);
    break;
  case 123:
    V = B.CreateAShr(L, R);
    break;
  case 125:
    V = B.CreateLShr(L, R);
    break;
  case 127:
    V = B.CreateAnd(L, R);
    break;
  case 129:
    V = B.CreateOr(L, R);
    break;
  default:
    V = B.CreateXor(L, R);
    break;
  }
  pushL(V);
}

void Translator::emitDivision(bool Long, bool Rem) {
  Value *R = Long ? popL() : popI();
  Value *L = Long ? popL() : popI();
  Type *Ty = R->getType();
  throwIf(B.CreateICmpEQ(R, ConstantInt::get(Ty, 0)),
          "java/lang/ArithmeticException", "/ by zero");
  // MIN / -1 overflows in LLVM as in C++; Java wraps (and MIN % -1 is 0).
  Value *MinusOne = B.CreateICmpEQ(R, ConstantInt::getSigned(Ty, -1));
  Value *Safe = B.CreateSelect(MinusOne, ConstantInt::get(Ty, 1), R);
  Value *V = Rem ? B.CreateSRem(L, Safe) : B.CreateSDiv(L, Safe);
  V = B.CreateSelect(MinusOne, Rem ? ConstantInt::get(Ty, 0) : B.CreateNeg(L),
                     V);
  if (Long)
    pushL(V);
  else
    push(V);
}

void Translator::emitReturn(uint8_t Op) {
  if (!Held.empty())
    return refuse("returns holding a monitor it entered (unstructured "
                  "locking)");
  Value *Result = Op == RETURN    ? B.getInt64(0)
                  : Op == LRETURN ? slot(Sp - 2)
                                  : slot(Sp - 1);
  if (SyncObj)
    monitor(MonitorExitName, SyncObj);
  // Tier 0 polls at returns; an inlined return is no return, and the
  // polls on the backward branches keep bounding the time to a safepoint.
  if (!Outer)
    poll();
  emitRet(Result, /*Threw=*/false);
}

void Translator::emitInvoke(uint8_t Op, unsigned Index) {
  Method *RM = resolved(resolveMethodRef(VT, C, Index), Index);
  if (!RM)
    return;
  if ((Op == INVOKESTATIC) != RM->isStatic())
    return refuse("calls " +
                  std::string(RM->isStatic() ? "static" : "instance") +
                  " method " + RM->qualifiedName() + " the other way");
  unsigned N = RM->ArgSlots;
  Sp -= int(N);
  Value *Args = argsArray(N);
  for (unsigned K = 0; K < N; ++K)
    B.CreateStore(slot(Sp + int(K)),
                  B.CreateConstInBoundsGEP1_64(I64, Args, K));
  Value *R;
  if (Op == INVOKESTATIC) {
    ensureInitialized(RM->Owner);
    R = emitCall(ptr(RM), inlineBody(RM), Args);
  } else {
    Value *Recv = B.CreateIntToPtr(slot(Sp), Ptr, "receiver");
    nullCheck(Recv, "Cannot invoke \"" + RM->qualifiedName() +
                        "\" because value is null");
    bool Virtual = Op != INVOKESPECIAL;
    Function *Inline = nullptr;
    Class *K = nullptr;       // the profile's one receiver class
    Method *Target = nullptr; // what a receiver of K runs
    if (!Virtual && RM->Owner == ObjectClass && RM->Name == "<init>")
      R = nullptr; // Object() does nothing: the new object need not escape
    else if (!Virtual && (RM->VtableIndex < 0 || RM->Owner->isInterface()))
      R = emitCall(ptr(RM), inlineBody(RM), Args); // no vtable to check
    else if (Op == INVOKEVIRTUAL && !RM->isAbstract() &&
             ((RM->Flags | RM->Owner->Flags) & AccFinal) &&
             (Inline = inlineBody(RM)))
      R = emitCall(ptr(RM), Inline, Args); // nothing can override it
    else if (!Outer && Op == INVOKEVIRTUAL &&
             dependOnOneImplementation(RM, compiledCode()) &&
             (Inline = inlineBody(RM)))
      R = emitChaCall(Recv, RM, Inline, Args); // no check, before a profile's
    else if (Virtual && (Inline = profiledInlineBody(RM, K, Target)))
      R = emitGuardedCall(Recv, RM, K, Target, Inline, Args, /*Trap=*/true);
    else if (Op == INVOKEVIRTUAL &&
             dependOnOneImplementation(RM, compiledCode()) &&
             (Inline = inlineBody(RM)))
      R = emitChaCall(Recv, RM, Inline, Args);
    else
      R = emitCall(selectTarget(Recv, RM, Virtual), nullptr, Args);
  }
  if (RM->ReturnKind == 'J')
    pushL(R);
  else if (RM->ReturnKind != 'V')
    push(R);
}

Value *Translator::selectTarget(Value *Recv, Method *RM, bool Virtual) {
  Value *Target = callHelper(helperSelect,
                             {Thread, Recv, ptr(RM), B.getInt1(Virtual)}, Ptr);
  branchToDispatchIf(B.CreateIsNull(Target));
  return Target;
}

Value *Translator::emitCall(Value *Target, Function *Inline, Value *Args) {
  if (Inline) {
    // The inline body says whether it threw: after inlining that is a
    // constant on each of its paths, and no test of Pending stays. Its
    // call carries this frame at the invoke (the arguments popped): LLVM's
    // inliner puts it before the frames of each trap it inlines.
    SmallVector<Value *, 32> Caller;
    appendFrameState(Caller);
    Value *Pair = B.CreateCall(Inline, {Thread, Target, Args},
                               {OperandBundleDef("deopt", Caller)});
    Value *R = B.CreateExtractValue(Pair, 0);
    branchToDispatchIf(B.CreateExtractValue(Pair, 1));
    return R;
  }
  Value *Entry = B.CreateLoad(
      Ptr, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Target, EntryOffset),
      "entry");
  FunctionType *EntryTy = FunctionType::get(I64, {Ptr, Ptr, Ptr}, false);
  Value *R = B.CreateCall(EntryTy, Entry, {Thread, Target, Args});
  ranOtherCode();
  checkPending();
  return R;
}

Value *Translator::emitGuardedCall(Value *Recv, Method *RM, Class *Expected,
                                   Method *Target, Function *Inline,
                                   Value *Args, bool Trap) {
  // A receiver of class Expected runs Target, whatever is loaded later.
  Value *Cls =
      B.CreateLoad(Ptr,
                   B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Recv,
                                                offsetof(java::Object, Cls)),
                   "class");
  BasicBlock *Inlined = newBlock("guard.inlined");
  // A trap re-executes the invoke, its arguments back on the stack.
  BasicBlock *Other =
      Trap ? trapBlock(TrapReason::ClassCheck, Sp + int(RM->ArgSlots))
           : newBlock("guard.virtual");
  B.CreateCondBr(B.CreateICmpEQ(Cls, ptr(Expected)), Inlined, Other,
                 MDBuilder(Ctx).createBranchWeights(1000, 1));
  B.SetInsertPoint(Inlined);
  Value *Fast = emitCall(ptr(Target), Inline, Args);
  if (Trap)
    return Fast;
  BasicBlock *FastEnd = B.GetInsertBlock();
  BasicBlock *Join = newBlock("guard.join");
  B.CreateBr(Join);
  B.SetInsertPoint(Other);
  Value *Slow = emitCall(selectTarget(Recv, RM, true), nullptr, Args);
  BasicBlock *SlowEnd = B.GetInsertBlock();
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  PHINode *R = B.CreatePHI(I64, 2, "result");
  R->addIncoming(Fast, FastEnd);
  R->addIncoming(Slow, SlowEnd);
  return R;
}

/// How many bytes of bytecode a callee may have to be inlined: a hot
/// callee (called often enough in tier 0 to be compiled on its own) gets
/// the larger budget, as an optimizing JIT's frequent call sites do, so
/// that a hot synchronized method such as a buffer's append joins its
/// caller's code, where jitlock-elide coarsens or elides its lock.
uint32_t inlineBudget(const Method *RM) {
  if (!Opts.InlineSize || Opts.HotInlineSize <= Opts.InlineSize)
    return Opts.InlineSize;
  uint32_t Calls = RM->Invocations.load(std::memory_order_relaxed);
  bool Hot = Calls >= Opts.HotCalleeCalls &&
             Calls >= Opts.InvocationThreshold && Opts.InvocationThreshold;
  return Hot ? Opts.HotInlineSize : Opts.InlineSize;
}

Function *Translator::profiledInlineBody(Method *RM, Class *&K,
                                         Method *&Target) {
  if (!DeoptOpts.Speculate ||
      !(K = monomorphicReceiver(M, Pc, DeoptOpts.TrapMinCount)))
    return nullptr;
  Target = selectVirtualIn(K, RM);
  if (!Target || Target->isAbstract())
    return nullptr;
  return inlineBody(Target);
}

Function *Translator::inlineBody(Method *RM) {
  if (Depth >= Opts.InlineDepth || RM->Code.empty() ||
      RM->Code.size() > inlineBudget(RM))
    return nullptr;
  // A recursive call: inlined a bounded number of levels, as an optimizing
  // JIT does, so that the levels inlined cost no call and their re-entry of
  // the same monitor is nested in the caller's region.
  uint32_t Levels = 0;
  for (const Translator *T = this; T; T = T->Outer)
    if (T->M == RM && ++Levels > Opts.RecursiveInlineLevel)
      return nullptr;
  std::string Name = (F->getName() + ".inline" + Twine(InlineCount++)).str();
  Function *Body;
  std::string Refused;
  {
    Translator Inner(VT, RM, Mod, Name, this);
    Inner.run();
    Body = Inner.F;
    Refused = Inner.why();
    if (Inner.OtherCodeAnywhere)
      ranOtherCode();
    if (Refused.empty())
      NumTraps += Inner.NumTraps; // its traps are this function's once inlined
  }
  if (Refused.empty())
    return Body;
  if (Opts.Log)
    errs() << "jitlock-java: jit: not inlined " << RM->qualifiedName()
           << " into " << M->qualifiedName() << ": " << Refused << "\n";
  Body->eraseFromParent();
  return nullptr;
}

void Translator::emitInstruction() {
  const uint8_t *I = Code + Pc;
  uint8_t Op = *I;
  size_t Next = Blocks[Pc + 1] ? Pc + 1 : 0;
  for (size_t P = Pc + 1; P <= Len && !Next; ++P)
    if (P == Len || Blocks[P])
      Next = P;
  switch (Op) {
  case 0: // nop
    break;
  case 1: // aconst_null
    push(B.getInt64(0));
    break;
  case ICONST_M1 ... ICONST_5:
    push(B.getInt32(uint32_t(int32_t(Op) - ICONST_0)));
    break;
  case LCONST_0:
  case LCONST_1:
    pushL(B.getInt64(Op - LCONST_0));
    break;
  case BIPUSH:
    push(B.getInt32(uint32_t(int32_t(int8_t(I[1])))));
    break;
  case SIPUSH:
    push(B.getInt32(uint32_t(int32_t(s2(I + 1)))));
    break;
  case LDC:
  case LDC_W: {
    unsigned Index = Op == LDC ? I[1] : u2(I + 1);
    const CpEntry &E = C->File->Cp[Index];
    if (E.Tag == CpInteger)
      push(B.getInt32(uint32_t(E.Int)));
    else if (Object *S = E.Tag == CpString
                             ? resolved(resolveString(VT, C, Index), Index)
                             : nullptr)
      push(ptr(S));
    else if (Class *K = E.Tag == CpClass ? classRef(Index) : nullptr)
      push(ptr(K->Mirror));
    else
      return;
    break;
  }
  case LDC2_W:
    pushL(B.getInt64(uint64_t(C->File->Cp[u2(I + 1)].Long)));
    break;
  case ILOAD:
  case LLOAD:
  case ALOAD:
    pushLocal(I[1], Op == LLOAD);
    break;
  case 26:
  case 27:
  case 28:
  case 29:
    pushLocal(Op - 26, false);
    break;
  case 30:
  case 31:
  case 32:
  case 33:
    pushLocal(Op - 30, true);
    break;
  case 42:
  case 43:
  case 44:
  case 45:
    pushLocal(Op - 42, false);
    break;
  case IALOAD:
    push(atomicLoad(I32, arrayElement(4, false), false));
    break;
  case LALOAD:
    pushL(atomicLoad(I64, arrayElement(8, false), false));
    break;
  case AALOAD:
    push(atomicLoad(I64, arrayElement(8, false), false));
    break;
  case BALOAD:
    push(
        B.CreateSExt(B.CreateLoad(B.getInt8Ty(), arrayElement(1, false)), I32));
    break;
  case CALOAD:
    push(B.CreateZExt(B.CreateLoad(B.getInt16Ty(), arrayElement(2, false)),
                      I32));
    break;
  case SALOAD:
    push(B.CreateSExt(B.CreateLoad(B.getInt16Ty(), arrayElement(2, false)),
                      I32));
    break;
  case ISTORE:
  case ASTORE:
  case LSTORE:
    storeLocal(I[1], Op == LSTORE);
    break;
  case 59:
  case 60:
  case 61:
  case 62:
    storeLocal(Op - 59, false);
    break;
  case 63:
  case 64:
  case 65:
  case 66:
    storeLocal(Op - 63, true);
    break;
  case 75:
  case 76:
  case 77:
  case 78:
    storeLocal(Op - 75, false);
    break;
  case IASTORE:
  case LASTORE:
  case AASTORE:
  case BASTORE:
  case CASTORE:
  case SASTORE: {
    Value *V = Op == LASTORE ? popL() : pop();
    unsigned Size = Op == IASTORE                    ? 4
                    : Op == LASTORE || Op == AASTORE ? 8
                    : Op == CASTORE || Op == SASTORE ? 2
                                                     : 1;
    Value *Addr = arrayElement(Size, true);
    switch (Op) {
    case IASTORE:
      atomicStore(B.CreateTrunc(V, I32), Addr, false);
      break;
    case LASTORE:
      atomicStore(V, Addr, false);
      break;
    case AASTORE: {
      Value *O = B.CreateIntToPtr(V, Ptr);
      BasicBlock *Check = newBlock("store.check"), *Store = newBlock("store");
      B.CreateCondBr(B.CreateIsNull(O), Store, Check);
      B.SetInsertPoint(Check);
      Value *Ok =
          callHelper(helperCheckStore, {Thread, O, LastArray}, B.getInt1Ty());
      B.CreateCondBr(Ok, Store, dispatchBlock());
      B.SetInsertPoint(Store);
      atomicStore(V, Addr, false);
      break;
    }
    case BASTORE: {
      // A boolean[] stores 0 or 1 (tier 0 asks the array's class too).
      Value *Cls = B.CreateLoad(
          Ptr, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), LastArray, 8));
      Value *Kind = B.CreateLoad(
          B.getInt8Ty(),
          B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Cls, ElemKindOffset));
      Value *Byte = B.CreateTrunc(V, B.getInt8Ty());
      Byte = B.CreateSelect(B.CreateICmpEQ(Kind, B.getInt8('Z')),
                            B.CreateAnd(Byte, 1), Byte);
      B.CreateStore(Byte, Addr);
      break;
    }
    default:
      B.CreateStore(B.CreateTrunc(V, B.getInt16Ty()), Addr);
      break;
    }
    break;
  }
  case 87: // pop
    --Sp;
    break;
  case 88: // pop2
    Sp -= 2;
    break;
  case 89: // dup
    shuffle(1, {0, 0});
    break;
  case 90: // dup_x1
    shuffle(2, {0, 1, 0});
    break;
  case 91: // dup_x2
    shuffle(3, {0, 2, 1, 0});
    break;
  case 92: // dup2
    shuffle(2, {1, 0, 1, 0});
    break;
  case 93: // dup2_x1
    shuffle(3, {1, 0, 2, 1, 0});
    break;
  case 94: // dup2_x2
    shuffle(4, {1, 0, 3, 2, 1, 0});
    break;
  case 95: // swap
    shuffle(2, {0, 1});
    break;
  case 96:
  case 100:
  case 104:
  case 120:
  case 122:
  case 124:
  case 126:
  case 128:
  case 130:
    emitIntBinary(Op);
    break;
  case 97:
  case 101:
  case 105:
  case 121:
  case 123:
  case 125:
  case 127:
  case 129:
  case 131:
    emitLongBinary(Op);
    break;
  case 108: // idiv
  case 112: // irem
    emitDivision(false, Op == 112);
    break;
  case 109: // ldiv
  case 113: // lrem
    emitDivision(true, Op == 113);
    break;
  case 116: // ineg
    push(B.CreateNeg(popI()));
    break;
  case 117: // lneg
    pushL(B.CreateNeg(popL()));
    break;
  case IINC:
    LocalIds.at(I[1]) = fresh();
    setLocal(I[1], B.CreateZExt(
                       B.CreateAdd(B.CreateTrunc(local(I[1]), I32),
                                   B.getInt32(uint32_t(int32_t(int8_t(I[2]))))),
                       I64));
    break;
  case 133: // i2l
    pushL(B.CreateSExt(popI(), I64));
    break;
  case 136: // l2i
    push(B.CreateTrunc(popL(), I32));
    break;
  case 145: // i2b
    push(B.CreateSExt(B.CreateTrunc(popI(), B.getInt8Ty()), I32));
    break;
  case 146: // i2c
    push(B.CreateZExt(B.CreateTrunc(popI(), B.getInt16Ty()), I32));
    break;
  case 147: // i2s
    push(B.CreateSExt(B.CreateTrunc(popI(), B.getInt16Ty()), I32));
    break;
  case 148: { // lcmp
    Value *R = popL(), *L = popL();
    push(B.CreateSelect(B.CreateICmpSLT(L, R), B.getInt32(uint32_t(-1)),
                        B.CreateZExt(B.CreateICmpSGT(L, R), I32)));
    break;
  }
  case TABLESWITCH:
  case LOOKUPSWITCH: {
    const uint8_t *P = Code + ((Pc + 4) & ~size_t(3));
    Value *Key = popI();
    size_t Default = size_t(int64_t(Pc) + s4(P));
    enqueue(Default);
    if (failed())
      return;
    if (Op == TABLESWITCH) {
      int32_t Low = s4(P + 4), High = s4(P + 8);
      SwitchInst *S = B.CreateSwitch(Key, Blocks[Default],
                                     unsigned(int64_t(High) - Low + 1));
      for (int64_t K = Low; K <= High; ++K) {
        size_t Target = size_t(int64_t(Pc) + s4(P + 12 + 4 * (K - Low)));
        enqueue(Target);
        if (failed())
          return;
        S->addCase(B.getInt32(uint32_t(int32_t(K))), Blocks[Target]);
      }
    } else {
      int32_t Pairs = s4(P + 4);
      SwitchInst *S = B.CreateSwitch(Key, Blocks[Default], unsigned(Pairs));
      for (int32_t K = 0; K < Pairs; ++K) {
        size_t Target = size_t(int64_t(Pc) + s4(P + 12 + 8 * K));
        enqueue(Target);
        if (failed())
          return;
        S->addCase(B.getInt32(uint32_t(s4(P + 8 + 8 * K))), Blocks[Target]);
      }
    }
    if (Default <= Pc)
      poll(); // (tier 0 polls after any backward switch; so does this)
    return;
  }
  case IRETURN:
  case LRETURN:
  case ARETURN:
  case RETURN:
    emitReturn(Op);
    return;
  case GETSTATIC:
  case PUTSTATIC:
  case GETFIELD:
  case PUTFIELD: {
    bool Static = Op == GETSTATIC || Op == PUTSTATIC;
    Field *Fd = resolved(resolveFieldRef(VT, C, u2(I + 1), Static), u2(I + 1));
    if (!Fd)
      return;
    char D = Fd->Descriptor[0];
    bool Long = D == 'J';
    Value *Addr;
    Value *V = nullptr;
    if (Op == PUTSTATIC || Op == PUTFIELD)
      V = narrowForField(Long ? popL() : pop(), D);
    if (Static) {
      ensureInitialized(Fd->Owner);
      Addr = ptr(&Fd->Owner->Statics[Fd->Offset]);
    } else {
      Value *O = popA();
      nullCheck(O, std::string(Op == GETFIELD ? "Cannot read field \""
                                              : "Cannot assign field \"") +
                       Fd->Name + "\" because value is null");
      Addr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), O, Fd->Offset);
    }
    if (V) {
      atomicStore(V, Addr, Fd->isVolatile());
    } else {
      Value *L = atomicLoad(I64, Addr, Fd->isVolatile());
      if (Long)
        pushL(L);
      else
        push(L);
    }
    break;
  }
  case INVOKEVIRTUAL:
  case INVOKESPECIAL:
  case INVOKESTATIC:
  case INVOKEINTERFACE:
    emitInvoke(Op, u2(I + 1));
    break;
  case INVOKEDYNAMIC: {
    unsigned N = callSiteArgSlots(C, u2(I + 1));
    Sp -= int(N);
    Value *Args = argsArray(N);
    for (unsigned K = 0; K < N; ++K)
      B.CreateStore(slot(Sp + int(K)),
                    B.CreateConstInBoundsGEP1_64(I64, Args, K));
    Value *R = callHelper(helperInvokeDynamic,
                          {Thread, ptr(C), B.getInt32(u2(I + 1)), Args}, I64);
    ranOtherCode();
    checkPending();
    push(R);
    break;
  }
  case NEW: {
    Class *K = classRef(u2(I + 1));
    if (!K)
      return;
    if (K->isInterface() || (K->Flags & AccAbstract))
      return refuse("instantiates the abstract " + K->javaName());
    Value *O = allocate(K);
    ranOtherCode(); // its class's first instance, or its initializer
    branchToDispatchIf(B.CreateIsNull(O));
    push(O);
    break;
  }
  case NEWARRAY:
  case ANEWARRAY: {
    Class *AC;
    if (Op == NEWARRAY) {
      static const char *const Descs[] = {"Z", "C", "F", "D",
                                          "B", "S", "I", "J"};
      AC = arrayClassOf(Descs[I[1] - 4]);
    } else {
      Class *K = classRef(u2(I + 1));
      if (!K)
        return;
      AC = arrayClassFor(K);
    }
    if (!AC)
      return refuse("no array class");
    Value *A = callHelper(helperNewArray, {Thread, ptr(AC), popI()}, I64);
    branchToDispatchIf(B.CreateICmpEQ(A, B.getInt64(0)));
    push(A);
    break;
  }
  case MULTIANEWARRAY: {
    Class *K = classRef(u2(I + 1));
    if (!K)
      return;
    unsigned Dims = I[3];
    Sp -= int(Dims);
    Value *Args = argsArray(Dims);
    for (unsigned D = 0; D < Dims; ++D)
      B.CreateStore(slot(Sp + int(D)),
                    B.CreateConstInBoundsGEP1_64(I64, Args, D));
    Value *A = callHelper(helperMultiNewArray,
                          {Thread, ptr(K), Args, B.getInt32(Dims)}, I64);
    branchToDispatchIf(B.CreateICmpEQ(A, B.getInt64(0)));
    push(A);
    break;
  }
  case ARRAYLENGTH: {
    Value *A = popA();
    nullCheck(A, "Cannot read the array length because value is null");
    push(B.CreateLoad(
        I32, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), A,
                                          offsetof(java::Array, Length))));
    break;
  }
  case ATHROW: {
    Value *Ex = popA();
    nullCheck(Ex, "Cannot throw exception because value is null");
    B.CreateStore(
        Ex, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Thread, PendingOffset));
    B.CreateBr(dispatchBlock());
    return;
  }
  case CHECKCAST:
  case INSTANCEOF: {
    Class *K = classRef(u2(I + 1));
    if (!K)
      return;
    Value *O = B.CreateIntToPtr(slot(Sp - 1), Ptr);
    BasicBlock *Test = newBlock("type.test"), *Done = newBlock("type.done");
    BasicBlock *From = B.GetInsertBlock();
    B.CreateCondBr(B.CreateIsNull(O), Done, Test);
    B.SetInsertPoint(Test);
    Value *Is = callHelper(helperIsInstance, {O, ptr(K)}, B.getInt1Ty());
    if (Op == CHECKCAST) {
      BasicBlock *Throw = newBlock("cast.throw");
      B.CreateCondBr(Is, Done, Throw);
      B.SetInsertPoint(Throw);
      callHelper(helperThrowCast, {Thread, O, ptr(K)}, B.getVoidTy());
      B.CreateBr(dispatchBlock());
      B.SetInsertPoint(Done);
    } else {
      BasicBlock *TestEnd = B.GetInsertBlock();
      B.CreateBr(Done);
      B.SetInsertPoint(Done);
      PHINode *R = B.CreatePHI(B.getInt1Ty(), 2);
      R->addIncoming(B.getFalse(), From);
      R->addIncoming(Is, TestEnd);
      setSlot(Sp - 1, R);
    }
    break;
  }
  case MONITORENTER: {
    int Id = StackIds[Sp - 1];
    Value *O = popA();
    nullCheck(O, "Cannot enter synchronized block because value is null");
    monitor(MonitorEnterName, O);
    Held.push_back(Id);
    ranOtherCode(); // a contended enter runs handshakes
    break;
  }
  case MONITOREXIT: {
    // The lowered exit of a monitor the thread does not hold is a fatal
    // misuse, where tier 0 throws IllegalMonitorStateException: compile
    // only exits of the monitor this method entered last.
    int Id = StackIds[Sp - 1];
    if (Held.empty() || Held.back() != Id)
      return refuse("monitorexit of an object other than the one this method "
                    "entered last (unstructured locking)");
    Value *O = popA();
    nullCheck(O, "Cannot exit synchronized block because value is null");
    monitor(MonitorExitName, O);
    Held.pop_back();
    break;
  }
  case WIDE: {
    unsigned Index = u2(I + 2);
    switch (I[1]) {
    case ILOAD:
    case ALOAD:
    case LLOAD:
      pushLocal(Index, I[1] == LLOAD);
      break;
    case ISTORE:
    case ASTORE:
    case LSTORE:
      storeLocal(Index, I[1] == LSTORE);
      break;
    default: // iinc
      LocalIds.at(Index) = fresh();
      setLocal(Index, B.CreateZExt(
                          B.CreateAdd(B.CreateTrunc(local(Index), I32),
                                      B.getInt32(uint32_t(int32_t(s2(I + 4))))),
                          I64));
      break;
    }
    break;
  }
  default: {
    // Branches.
    int SpAtBytecode = Sp;
    size_t Target;
    Value *Taken;
    if (Op >= IFEQ && Op <= 164) {
      static const CmpInst::Predicate Preds[] = {
          CmpInst::ICMP_EQ,  CmpInst::ICMP_NE,  CmpInst::ICMP_SLT,
          CmpInst::ICMP_SGE, CmpInst::ICMP_SGT, CmpInst::ICMP_SLE};
      bool Two = Op >= IF_ICMPEQ;
      Value *R = Two ? popI() : B.getInt32(0);
      Value *L = popI();
      Taken = B.CreateICmp(Preds[Two ? Op - IF_ICMPEQ : Op - IFEQ], L, R);
      Target = size_t(int64_t(Pc) + s2(I + 1));
    } else if (Op == IF_ACMPEQ || Op == IF_ACMPNE) {
      Value *R = pop(), *L = pop();
      Taken = Op == IF_ACMPEQ ? B.CreateICmpEQ(L, R) : B.CreateICmpNE(L, R);
      Target = size_t(int64_t(Pc) + s2(I + 1));
    } else if (Op == IFNULL || Op == IFNONNULL) {
      Value *V = pop();
      Taken = Op == IFNULL ? B.CreateICmpEQ(V, B.getInt64(0))
                           : B.CreateICmpNE(V, B.getInt64(0));
      Target = size_t(int64_t(Pc) + s2(I + 1));
    } else if (Op == GOTO || Op == GOTO_W) {
      Target = size_t(int64_t(Pc) + (Op == GOTO ? s2(I + 1) : s4(I + 1)));
      if (Target <= Pc)
        pollAndCheck(Target);
      jump(Target);
      return;
    } else {
      return refuse("not an instruction tier 1 compiles");
    }
    emitBranch(Taken, Target, Next, SpAtBytecode);
    return;
  }
  }
  // Falls through to the next instruction.
  if (Next >= Len)
    return refuse("execution falls off the end of the code");
  if (OtherCodeHere)
    checkInvalidated(Next);
  jump(Next);
}

//===-- Speculation -------------------------------------------------------===//

std::vector<Translator::VirtualFrame> Translator::virtualFrames() const {
  // An outer translator is stopped at its invoke of this method, its
  // arguments popped: the interpreter completes that invoke with this
  // frame's result. A synchronized method's own monitor is its frame's.
  std::vector<VirtualFrame> Frames;
  if (Outer)
    Frames = Outer->virtualFrames();
  Frames.push_back({M, Pc, Locals, ArrayRef<AllocaInst *>(Stack).take_front(Sp),
                    unsigned(Held.size()) + (SyncObj ? 1 : 0)});
  return Frames;
}

void Translator::appendFrameState(SmallVectorImpl<Value *> &State) {
  VirtualFrame VF = virtualFrames().back();
  State.append({ptr(VF.M), B.getInt32(VF.Bci), B.getInt32(VF.Locals.size()),
                B.getInt32(VF.Stack.size()), B.getInt32(VF.NumMonitors)});
  // As pointers: a reference kept in a slot is then the object itself
  // once the slots are SSA values, not a ptrtoint that would count as
  // its escape (and keep jitlock-elide from eliding its lock).
  for (AllocaInst *A : VF.Locals)
    State.push_back(B.CreateIntToPtr(B.CreateLoad(I64, A), Ptr));
  for (AllocaInst *A : VF.Stack)
    State.push_back(B.CreateIntToPtr(B.CreateLoad(I64, A), Ptr));
}

/// The trap re-executes the current bytecode in tier 0: its "deopt" bundle
/// is the state of docs/java.md, "Speculation and deoptimization". Only
/// this function's frame is here: the outer frames of an inline body come
/// with its calls (emitCall), which the inliner prepends, and
/// numberVirtualFrames (Inliner.h) then puts the frame count first;
/// jitlock-deopt-state appends the monitors of the whole chain.
void Translator::emitUncommonTrap(TrapReason Reason) {
  SmallVector<Value *, 32> State;
  appendFrameState(State);
  State.push_back(B.getInt32(uint32_t(Reason)));
  // An inline body returns its result and "threw" flag: the inliner turns
  // its trap into one that returns the compiled function's i64.
  Function *Deoptimize = Intrinsic::getDeclaration(
      &Mod, Intrinsic::experimental_deoptimize, {F->getReturnType()});
  CallInst *Trap =
      B.CreateCall(Deoptimize, {}, {OperandBundleDef("deopt", State)});
  B.CreateRet(Trap);
  ++NumTraps;
}

/// A block that traps at the current bytecode, whose operands are still on
/// the stack (SpAtBytecode slots).
BasicBlock *Translator::trapBlock(TrapReason Reason, int SpAtBytecode) {
  IRBuilderBase::InsertPointGuard Guard(B);
  BasicBlock *Trap = newBlock("trap." + Twine(Pc));
  B.SetInsertPoint(Trap);
  int SpAfter = Sp;
  Sp = SpAtBytecode;
  emitUncommonTrap(Reason);
  Sp = SpAfter;
  return Trap;
}

/// A conditional branch: a side tier 0 never took (with enough executions
/// to trust it) traps, and its target is not compiled from here.
void Translator::emitBranch(Value *Taken, size_t Target, size_t Next,
                            int SpAtBytecode) {
  int Always =
      DeoptOpts.Speculate ? alwaysTakenSide(M, Pc, DeoptOpts.TrapMinCount) : -1;
  if (Always != 0)
    enqueue(Target);
  if (Always != 1)
    enqueue(Next);
  if (failed())
    return;
  BasicBlock *TakenBB = Always == 0
                            ? trapBlock(TrapReason::UnstableIf, SpAtBytecode)
                            : Blocks[Target];
  BasicBlock *NextBB = Always == 1
                           ? trapBlock(TrapReason::UnstableIf, SpAtBytecode)
                           : Blocks[Next];
  if (Always != 0 && Target <= Pc) {
    BasicBlock *Back = newBlock("backedge");
    B.CreateCondBr(Taken, Back, NextBB);
    B.SetInsertPoint(Back);
    pollAndCheck(Target);
    B.CreateBr(Blocks[Target]);
  } else {
    B.CreateCondBr(Taken, TakenBB, NextBB);
  }
}

//===-- Lazy deoptimization -----------------------------------------------===//

void Translator::checkInvalidated(size_t Bci, int SpThere) {
  if (Outer || !Compiled)
    return;
  auto *Word = B.CreateAlignedLoad(I32, ptr(&Compiled->Invalidated), Align(4),
                                   "invalidated");
  Word->setAtomic(AtomicOrdering::Monotonic); // the handshake orders it
  auto *Test = cast<Instruction>(B.CreateIsNotNull(Word));
  BasicBlock *Trap = newBlock("invalidated." + Twine(Bci));
  BasicBlock *Valid = newBlock("valid");
  BranchInst *Branch = B.CreateCondBr(
      Test, Trap, Valid, MDBuilder(Ctx).createBranchWeights(1, 1u << 20));
  B.SetInsertPoint(Trap);
  size_t PcHere = Pc;
  int SpHere = Sp;
  Pc = Bci;
  Sp = SpThere;
  emitUncommonTrap(TrapReason::Dependency);
  Pc = PcHere;
  Sp = SpHere;
  Checks.push_back({Word, Test, Branch, Valid, Trap});
  B.SetInsertPoint(Valid);
}

void Translator::dropUnneededChecks() {
  if (Unguarded)
    return;
  for (InvalidationCheck &K : Checks) {
    BranchInst::Create(K.Valid, K.Branch);
    K.Branch->eraseFromParent();
    K.Test->eraseFromParent();
    K.Word->eraseFromParent();
    K.Trap->eraseFromParent();
    --NumTraps;
  }
  Checks.clear();
}

Value *Translator::emitChaCall(Value *Recv, Method *RM, Function *Inline,
                               Value *Args) {
  if (Outer)
    // Traps on another class unless the profile saw one here already
    // (as it does once such a trap recompiled the method).
    return emitGuardedCall(Recv, RM, RM->Owner, RM, Inline, Args,
                           DeoptOpts.Speculate &&
                               !sawOtherReceiver(M, Pc, RM->Owner));
  Unguarded = true;
  return emitCall(ptr(RM), Inline, Args);
}

//===-- The JIT -----------------------------------------------------------===//

/// Collects the jitlock passes' error diagnostics instead of exiting, and
/// prints their remarks when asked to (--print-tier1=remarks).
class CollectErrors : public DiagnosticHandler {
public:
  CollectErrors(std::vector<std::string> &Errors, bool Remarks)
      : Errors(Errors), Remarks(Remarks) {}
  bool handleDiagnostics(const DiagnosticInfo &DI) override {
    const auto *Opt = dyn_cast<DiagnosticInfoOptimizationBase>(&DI);
    bool Remark = Remarks && Opt && Opt->getPassName() == "jitlock";
    if (DI.getSeverity() != DS_Error && !Remark)
      return true;
    std::string Text;
    raw_string_ostream OS(Text);
    DiagnosticPrinterRawOStream DP(OS);
    DI.print(DP);
    if (Remark)
      errs() << "jitlock-java: jit: remark: " << Text << "\n";
    else
      Errors.push_back(std::move(Text));
    return true;
  }
  bool isAnalysisRemarkEnabled(StringRef) const override { return false; }
  bool isMissedOptRemarkEnabled(StringRef Pass) const override {
    return Remarks && Pass == "jitlock";
  }
  bool isPassedOptRemarkEnabled(StringRef Pass) const override {
    return Remarks && Pass == "jitlock";
  }
  bool isAnyRemarkEnabled() const override { return Remarks; }

private:
  std::vector<std::string> &Errors;
  bool Remarks;
};

std::mutex CompileLock;
std::unique_ptr<orc::LLJIT> Jit;        // under CompileLock
std::unique_ptr<TargetMachine> Machine; // under CompileLock
/// Methods tier 1 has seen: compiled or refused, never tried twice.
std::unordered_map<const Method *, bool> Seen; // under CompileLock
unsigned NextId = 0;

/// Creates the VM's LLJIT and defines the runtime's symbols in it.
Error createJit() {
  auto JTMB = orc::JITTargetMachineBuilder::detectHost();
  if (!JTMB)
    return JTMB.takeError();
  JTMB->setCodeGenOptLevel(CodeGenOptLevel::Default);
  auto TM = JTMB->createTargetMachine();
  if (!TM)
    return TM.takeError();
  Machine = std::move(*TM);
  auto J = orc::LLJITBuilder().setJITTargetMachineBuilder(*JTMB).create();
  if (!J)
    return J.takeError();
  orc::SymbolMap Runtime;
  for (const RuntimeSymbol &S : runtimeSymbols())
    Runtime[(*J)->mangleAndIntern(S.Name)] = orc::ExecutorSymbolDef(
        orc::ExecutorAddr::fromPtr(S.Addr),
        JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  Runtime[(*J)->mangleAndIntern(NewObjectName)] = orc::ExecutorSymbolDef(
      orc::ExecutorAddr::fromPtr(&helperNew),
      JITSymbolFlags::Exported | JITSymbolFlags::Callable);
  if (Error E = (*J)->getMainJITDylib().define(
          orc::absoluteSymbols(std::move(Runtime))))
    return E;
  if (Error E = deopt::enableDeopt(**J))
    return E;
  installDeoptHandlers();
  Jit = std::move(*J);
  return Error::success();
}

/// O2 with the jitlock lowering, as any embedder runs it
/// (docs/embedding.md); the passes' errors come back in `Errors`.
void optimize(Module &Mod, std::vector<std::string> &Errors, bool Remarks) {
  PassBuilder PB(Machine.get());
  LoweringConfig Config = LoweringConfig::forThisProcess();
  if (!Opts.Elide)
    Config.Elide = false;
  registerPasses(PB, Config);
  jitlock::tools::AnalysisManagers AM(PB);
  // The slots are SSA values already (simplifySlots): jitlock-elide runs
  // at the start of the pipeline and sees a fresh object only once no
  // alloca holds it.
  ModulePassManager MPM;
  MPM.addPass(PB.buildPerModuleDefaultPipeline(OptimizationLevel::O2));
  Mod.getContext().setDiagnosticHandler(
      std::make_unique<CollectErrors>(Errors, Remarks));
  MPM.run(Mod, AM.MAM);
  std::string Broken;
  raw_string_ostream OS(Broken);
  if (Errors.empty() && verifyModule(Mod, &OS))
    Errors.push_back("the optimized module is not valid IR: " + Broken);
}

void printAssembly(Module &Mod) {
  std::unique_ptr<Module> Copy = CloneModule(Mod);
  SmallString<0> Text;
  raw_svector_ostream OS(Text);
  legacy::PassManager PM;
  if (Machine->addPassesToEmitFile(PM, OS, nullptr,
                                   CodeGenFileType::AssemblyFile)) {
    errs() << "jitlock-java: jit: the target cannot print assembly\n";
    return;
  }
  PM.run(*Copy);
  errs() << Text;
}

/// Compiles M; the code's address, or a refusal.
MethodEntry compile(VMThread *T, Method *M, CompiledCode *Code,
                    std::string &Why, bool &MayTrap) {
  if (M->Code.empty()) {
    Why = "it has no bytecode";
    return nullptr;
  }
  if (!Jit)
    if (Error E = createJit()) {
      Why = "no JIT: " + toString(std::move(E));
      return nullptr;
    }
  std::string Name =
      "java" + std::to_string(NextId++) + "." + M->Owner->Name + "." + M->Name;
  std::replace(Name.begin(), Name.end(), '/', '.');
  auto Ctx = std::make_unique<LLVMContext>();
  // Named for its method: ORC names a module's initializers (the lowering's
  // layout check is one) after the module, once per JITDylib.
  auto Mod = std::make_unique<Module>(Name, *Ctx);
  Mod->setTargetTriple(Machine->getTargetTriple().str());
  Mod->setDataLayout(Machine->createDataLayout());
  {
    Translator Tr(T, M, *Mod, Name);
    Tr.setCompiledCode(Code);
    Tr.run();
    if (!Tr.why().empty()) {
      Why = Tr.why();
      return nullptr;
    }
    MayTrap = Tr.mayTrap();
  }
  std::string Broken;
  raw_string_ostream BrokenOS(Broken);
  if (verifyModule(*Mod, &BrokenOS)) {
    Why = "tier 1 made invalid IR: " + Broken;
    return nullptr;
  }
  Function &F = *Mod->getFunction(Name);
  if (!inlineBodies(F, Why))
    return nullptr;
  if (!numberVirtualFrames(F)) {
    Why = "tier 1 made a trap whose deopt state is not a list of frames";
    return nullptr;
  }
  simplifySlots(F);
  bool Print = !Opts.Print.empty() &&
               M->qualifiedName().find(Opts.PrintFilter) != std::string::npos;
  if (Print && Opts.Print == "remarks")
    errs() << "jitlock-java: jit: remarks of " << M->qualifiedName() << ":\n";
  std::vector<std::string> Errors;
  optimize(*Mod, Errors, Print && Opts.Print == "remarks");
  if (!Errors.empty()) {
    Why = "the jitlock passes refused it: " + Errors.front();
    return nullptr;
  }
  if (Print && Opts.Print != "remarks") {
    errs() << "jitlock-java: jit: " << Opts.Print << " of "
           << M->qualifiedName() << ":\n";
    if (Opts.Print == "ir")
      Mod->print(errs(), nullptr);
    else
      printAssembly(*Mod);
  }
  if (Error E = Jit->addIRModule(
          orc::ThreadSafeModule(std::move(Mod), std::move(Ctx)))) {
    Why = toString(std::move(E));
    return nullptr;
  }
  auto Addr = Jit->lookup(Name);
  if (!Addr) {
    Why = toString(Addr.takeError());
    return nullptr;
  }
  return Addr->toPtr<MethodEntry>();
}

} // namespace

bool initTier1(const Tier1Options &O, std::string &Error) {
  Opts = O;
  Tier1InvocationThreshold = O.InvocationThreshold;
  Tier1BackEdgeThreshold = O.BackEdgeThreshold;
  PendingOffset = offsetIn(&VMThread::Pending);
  SafeLimitOffset = offsetIn(&VMThread::SafeLimit);
  EntryOffset = offsetIn(&Method::Entry);
  ElemKindOffset = offsetIn(&Class::ElemKind);
  if (!O.InvocationThreshold && !O.BackEdgeThreshold)
    return true;
  Profiling = true;
  if (InitializeNativeTarget() || InitializeNativeTargetAsmPrinter()) {
    Error = "tier 1 has no code generator for this host";
    return false;
  }
  return true;
}

/// CompileLock. Another thread's compile may take a while: a managed thread
/// waits for it in the native state, so that a safepoint or a revocation's
/// handshake need not (every thread takes it so: one that waited managed
/// could block a safepoint that the lock's holder, leaving the native state,
/// waits for).
static std::unique_lock<std::mutex> lockCompiles(VMThread *T) {
  std::unique_lock<std::mutex> Lock(CompileLock, std::try_to_lock);
  if (!Lock.owns_lock()) {
    std::optional<NativeScope> Safe;
    if (T && T->Rt && jitlock_rt_thread_state(T->Rt) == JITLOCK_THREAD_MANAGED)
      Safe.emplace(T);
    Lock.lock();
  }
  return Lock;
}

void compileHotMethod(VMThread *T, Method *M) {
  std::unique_lock<std::mutex> Lock = lockCompiles(T);
  // An invalidated method (Dependencies.h) is compiled again.
  if (!Seen.emplace(M, true).second && !takeInvalidated(M))
    return;
  if (!Opts.PrintProfile.empty() &&
      M->qualifiedName().find(Opts.PrintProfile) != std::string::npos)
    errs() << "jitlock-java: jit: " << describeProfile(M);
  auto Start = std::chrono::steady_clock::now();
  std::string Why;
  bool MayTrap = false;
  CompiledCode *Record = newCompiledCode(M);
  MethodEntry Code = compile(T, M, Record, Why, MayTrap);
  // Installed unless a class instantiated while it compiled broke a
  // dependency: then it is stale, and compiled again at the next threshold.
  if (Code && !installUnlessInvalidated(Record, [&] {
        if (MayTrap) {
          M->Tier1Code.store(Code, std::memory_order_release);
          M->Entry.store(deoptimizableEntry, std::memory_order_release);
        } else {
          M->Entry.store(Code, std::memory_order_release);
        }
      })) {
    takeInvalidated(M);
    Code = nullptr;
    Why = "a dependency broke while it compiled";
    Seen.erase(M);
  }
  double Ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
  if (Opts.Log) {
    char Time[32];
    std::snprintf(Time, sizeof Time, "%.2f", Ms);
    if (Code)
      errs() << "jitlock-java: jit: compiled " << M->qualifiedName() << " ("
             << M->Code.size() << " bytes of bytecode) in " << Time << " ms"
             << (MayTrap ? ", with uncommon traps" : "") << "\n";
    else
      errs() << "jitlock-java: jit: not compiled " << M->qualifiedName() << ": "
             << Why << "; it stays in tier 0\n";
  }
}

void invalidateTier1(Method *M, bool Recompile) {
  std::unique_lock<std::mutex> Lock = lockCompiles(currentVMThread());
  // Frames in the old code finish in it: the JIT never removes code.
  M->Entry.store(interpret, std::memory_order_release);
  if (Recompile) {
    Seen.erase(M);
    M->Invocations.store(0, std::memory_order_relaxed);
    M->BackEdges.store(0, std::memory_order_relaxed);
  }
  if (Opts.Log || DeoptOpts.Log)
    errs() << "jitlock-java: " << (Opts.Log ? "jit: " : "deopt: ")
           << M->qualifiedName()
           << (Recompile ? " deoptimized; compiled again when hot\n"
                         : " deoptimized too often; it stays in tier 0\n");
}

} // namespace jitlock::java
