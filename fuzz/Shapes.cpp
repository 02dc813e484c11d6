//===- Shapes.cpp - jitlock shapes inserted into modules ------------------===//
//
// The generator and the IR-level mutator share these builders. Each adds one
// shape that a frontend (careful or not) can emit: the ones docs/robustness.md
// lists, and plain monitor and poll traffic around loops and branches. The
// larger ones (coroutines, funclets, landing pads) are IR text templates
// linked into the module under a fresh name.
//
//===----------------------------------------------------------------------===//
#include "PassFuzzer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/SourceMgr.h"

#include <string>

using namespace llvm;

namespace jitlock::fuzz {

uint64_t ByteChoices::next() {
  if (Bytes.empty())
    return 0;
  uint8_t B = Bytes.front();
  Bytes = Bytes.drop_front();
  return B;
}

namespace {

constexpr const char *EnterName = "jitlock.monitor.enter";
constexpr const char *ExitName = "jitlock.monitor.exit";
constexpr const char *PollName = "jitlock.safepoint.poll";
constexpr const char *ThreadName = "jitlock.thread";

/// Larger shapes, as IR. @SHAPE is replaced with a fresh name.
constexpr const char *CoroutineTemplate = R"(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock.safepoint.poll()
declare ptr @malloc(i64)
declare void @free(ptr)
declare token @llvm.coro.id(i32, ptr, ptr, ptr)
declare ptr @llvm.coro.begin(token, ptr)
declare i8 @llvm.coro.suspend(token, i1)
declare ptr @llvm.coro.free(token, ptr)
declare i1 @llvm.coro.end(ptr, i1, token)
declare i64 @llvm.coro.size.i64()

define ptr @SHAPE(ptr %o, i64 %n) presplitcoroutine {
entry:
  %id = call token @llvm.coro.id(i32 0, ptr null, ptr null, ptr null)
  %size = call i64 @llvm.coro.size.i64()
  %mem = call ptr @malloc(i64 %size)
  %hdl = call ptr @llvm.coro.begin(token %id, ptr %mem)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %resumed ]
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.safepoint.poll()
  call void @jitlock.monitor.exit(ptr %o)
  %s = call i8 @llvm.coro.suspend(token none, i1 false)
  switch i8 %s, label %suspend [ i8 0, label %resumed
                                 i8 1, label %cleanup ]
resumed:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, %n
  br i1 %more, label %loop, label %cleanup
cleanup:
  %free = call ptr @llvm.coro.free(token %id, ptr %hdl)
  call void @free(ptr %free)
  br label %suspend
suspend:
  %unused = call i1 @llvm.coro.end(ptr %hdl, i1 false, token none)
  ret ptr %hdl
}
)";

constexpr const char *FuncletTemplate = R"(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock_fuzz_may_throw()
declare i32 @__CxxFrameHandler3(...)

define void @SHAPE(ptr %o) personality ptr @__CxxFrameHandler3 {
entry:
  call void @jitlock.monitor.enter(ptr %o)
  invoke void @jitlock_fuzz_may_throw() to label %done unwind label %dispatch
dispatch:
  %cs = catchswitch within none [label %handler] unwind label %pad
handler:
  %cp = catchpad within %cs [ptr null, i32 64, ptr null]
  call void @jitlock.monitor.enter(ptr %o)
  call void @jitlock.monitor.exit(ptr %o)
  catchret from %cp to label %done
pad:
  %cl = cleanuppad within none []
  call void @jitlock.monitor.exit(ptr %o) [ "funclet"(token %cl) ]
  cleanupret from %cl unwind to caller
done:
  call void @jitlock.monitor.exit(ptr %o)
  ret void
}
)";

/// javac's synchronized block: the handler's own exit is covered by the
/// handler.
constexpr const char *LandingPadTemplate = R"(
declare void @jitlock.monitor.enter(ptr)
declare void @jitlock.monitor.exit(ptr)
declare void @jitlock_fuzz_may_throw()
declare i32 @__gxx_personality_v0(...)

define void @SHAPE(ptr %o) personality ptr @__gxx_personality_v0 {
entry:
  invoke void @jitlock.monitor.enter(ptr %o) to label %body unwind label %handler
body:
  invoke void @jitlock_fuzz_may_throw() to label %exit unwind label %handler
exit:
  invoke void @jitlock.monitor.exit(ptr %o) to label %done unwind label %handler
handler:
  %lp = landingpad { ptr, i32 } cleanup
  invoke void @jitlock.monitor.exit(ptr %o) to label %rethrow unwind label %handler
rethrow:
  resume { ptr, i32 } %lp
done:
  ret void
}
)";

/// Objects in a relocating GC's address space, the thread a marked
/// parameter.
constexpr const char *AddrSpaceTemplate = R"(
declare void @jitlock.monitor.enter(ptr addrspace(1))
declare void @jitlock.monitor.exit(ptr addrspace(1))
declare ptr @jitlock.thread()

define void @SHAPE(ptr addrspace(1) %o, ptr "jitlock.thread" %t) gc "statepoint-example" {
entry:
  call void @jitlock.monitor.enter(ptr addrspace(1) %o)
  %g = getelementptr i8, ptr addrspace(1) %o, i64 8
  store i64 1, ptr addrspace(1) %g
  call void @jitlock.monitor.exit(ptr addrspace(1) %o)
  ret void
}
)";

/// A shape builder for one module.
class ShapeInserter {
public:
  ShapeInserter(Module &M, Choices &C) : M(M), Ctx(M.getContext()), C(C) {}

  void insertOne();
  Function *addSkeleton();

private:
  Module &M;
  LLVMContext &Ctx;
  Choices &C;
  unsigned Fresh = 0;

  std::string freshName(StringRef Base) {
    std::string Name;
    do
      Name = (Base + "." + Twine(Fresh++)).str();
    while (M.getNamedValue(Name));
    return Name;
  }

  template <typename T> T &pick(SmallVectorImpl<T> &V) {
    return V[C.below(V.size())];
  }

  Function *pickFunction();
  Instruction *pickPoint(Function &F);
  FunctionCallee jitlockFunction(StringRef Name);
  Value *pickObject(Instruction *Before, Type *Ty);
  CallInst *callMonitor(StringRef Name, Value *Obj, Instruction *Before);
  void linkTemplate(const char *Text);

  void monitorPair(Function &F);
  void monitorAcrossBlocks(Function &F);
  void wrapFunction(Function &F);
  void loneCall(Function &F);
  void badCall(Function &F);
  void setStackBang(Function &F);
  void markThreadParameter(Function &F);
  void addModuleFlag();
  void addJitlockGlobal();
  void makeInvoke(Function &F);
  void markCoroutine(Function &F);
};

Function *ShapeInserter::addSkeleton() {
  // define void @f(ptr %a, ptr %b, i1 %c, i64 %n): a loop with a diamond.
  Type *Ptr = PointerType::getUnqual(Ctx);
  Type *I64 = Type::getInt64Ty(Ctx);
  Type *I1 = Type::getInt1Ty(Ctx);
  auto *FT = FunctionType::get(Type::getVoidTy(Ctx), {Ptr, Ptr, I1, I64},
                               /*isVarArg=*/false);
  Function *F = Function::Create(FT, Function::ExternalLinkage,
                                 freshName("jitlock_fuzz_f"), M);
  auto *Entry = BasicBlock::Create(Ctx, "entry", F);
  auto *Loop = BasicBlock::Create(Ctx, "loop", F);
  auto *Then = BasicBlock::Create(Ctx, "then", F);
  auto *Else = BasicBlock::Create(Ctx, "else", F);
  auto *Latch = BasicBlock::Create(Ctx, "latch", F);
  auto *Exit = BasicBlock::Create(Ctx, "exit", F);
  IRBuilder<> B(Entry);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  PHINode *I = B.CreatePHI(I64, 2, "i");
  B.CreateCondBr(F->getArg(2), Then, Else);
  B.SetInsertPoint(Then);
  B.CreateStore(I, F->getArg(0));
  B.CreateBr(Latch);
  B.SetInsertPoint(Else);
  B.CreateBr(C.oneIn(3) ? Exit : Latch);
  B.SetInsertPoint(Latch);
  Value *Next = B.CreateAdd(I, B.getInt64(1), "next");
  B.CreateCondBr(B.CreateICmpULT(Next, F->getArg(3)), Loop, Exit);
  I->addIncoming(B.getInt64(0), Entry);
  I->addIncoming(Next, Latch);
  B.SetInsertPoint(Exit);
  B.CreateRetVoid();
  return F;
}

Function *ShapeInserter::pickFunction() {
  SmallVector<Function *, 8> Defined;
  for (Function &F : M)
    if (!F.isDeclaration())
      Defined.push_back(&F);
  if (Defined.empty() || C.oneIn(16))
    return addSkeleton();
  return pick(Defined);
}

/// An instruction to insert before: at or after its block's first insertion
/// point (after the PHIs and the EH pad).
Instruction *ShapeInserter::pickPoint(Function &F) {
  SmallVector<BasicBlock *, 16> Blocks;
  for (BasicBlock &BB : F)
    if (BB.getFirstInsertionPt() != BB.end())
      Blocks.push_back(&BB);
  if (Blocks.empty())
    return nullptr;
  BasicBlock *BB = pick(Blocks);
  SmallVector<Instruction *, 16> Points;
  for (auto It = BB->getFirstInsertionPt(); It != BB->end(); ++It)
    Points.push_back(&*It);
  return pick(Points);
}

FunctionCallee ShapeInserter::jitlockFunction(StringRef Name) {
  if (Function *F = M.getFunction(Name))
    return F;
  Type *Ptr = PointerType::getUnqual(Ctx);
  Type *Void = Type::getVoidTy(Ctx);
  FunctionType *FT;
  if (Name == ThreadName)
    FT = FunctionType::get(Ptr, false);
  else if (Name == PollName)
    FT = FunctionType::get(Void, false);
  else
    FT = FunctionType::get(Void, {C.oneIn(6) ? PointerType::get(Ctx, 1) : Ptr},
                           false);
  return M.getOrInsertFunction(Name, FT);
}

/// A pointer of type `Ty` usable before `Before`: an argument, a pointer
/// computed earlier in the block, a global, the thread, null, a cast.
Value *ShapeInserter::pickObject(Instruction *Before, Type *Ty) {
  auto *PtrTy = dyn_cast<PointerType>(Ty);
  if (!PtrTy)
    return UndefValue::get(Ty);
  Function &F = *Before->getFunction();
  SmallVector<Value *, 16> Candidates;
  for (Argument &A : F.args())
    if (A.getType()->isPointerTy())
      Candidates.push_back(&A);
  for (Instruction &I : *Before->getParent()) {
    if (&I == Before)
      break;
    if (I.getType()->isPointerTy())
      Candidates.push_back(&I);
  }
  Value *V;
  switch (C.below(8)) {
  case 0:
    V = ConstantPointerNull::get(PtrTy);
    break;
  case 1: {
    auto *G = new GlobalVariable(
        M, Type::getInt64Ty(Ctx), false, GlobalValue::InternalLinkage,
        ConstantInt::get(Type::getInt64Ty(Ctx), 1), freshName("obj"));
    V = G;
    break;
  }
  case 2:
    V = ConstantExpr::getIntToPtr(
        ConstantInt::get(Type::getInt64Ty(Ctx), C.below(4) * 8), PtrTy);
    break;
  case 3:
    V = C.oneIn(2) ? static_cast<Value *>(UndefValue::get(PtrTy))
                   : PoisonValue::get(PtrTy);
    break;
  case 4:
    // Locking the thread itself.
    V = CallInst::Create(jitlockFunction(ThreadName), "t", Before);
    break;
  default:
    if (Candidates.empty())
      return ConstantPointerNull::get(PtrTy);
    V = pick(Candidates);
    if (C.oneIn(4))
      V = GetElementPtrInst::Create(
          Type::getInt8Ty(Ctx), V,
          {ConstantInt::get(Type::getInt64Ty(Ctx), C.below(3) * 8)}, "field",
          Before);
    break;
  }
  if (V->getType() == Ty)
    return V;
  if (auto *Const = dyn_cast<Constant>(V))
    return ConstantExpr::getAddrSpaceCast(Const, Ty);
  return new AddrSpaceCastInst(V, Ty, "cast", Before);
}

CallInst *ShapeInserter::callMonitor(StringRef Name, Value *Obj,
                                     Instruction *Before) {
  FunctionCallee Callee = jitlockFunction(Name);
  FunctionType *FT = Callee.getFunctionType();
  if (!Obj)
    Obj = pickObject(Before, FT->getNumParams() ? FT->getParamType(0)
                                                : PointerType::getUnqual(Ctx));
  SmallVector<Value *, 1> Args;
  if (FT->getNumParams() == 1 && FT->getParamType(0) == Obj->getType())
    Args.push_back(Obj);
  else
    for (Type *T : FT->params())
      Args.push_back(UndefValue::get(T));
  return CallInst::Create(Callee, Args, "", Before);
}

void ShapeInserter::linkTemplate(const char *Text) {
  std::string IR = Text;
  std::string Name = freshName("jitlock_fuzz_shape");
  for (size_t At; (At = IR.find("@SHAPE")) != std::string::npos;)
    IR.replace(At, 6, "@" + Name);
  SMDiagnostic Err;
  std::unique_ptr<Module> Shape = parseAssemblyString(IR, Err, Ctx);
  if (!Shape)
    return;
  Shape->setDataLayout(M.getDataLayout());
  Shape->setTargetTriple(M.getTargetTriple());
  // A declaration of another type under the same name makes linking fail;
  // the module then stays as it was.
  Linker::linkModules(M, std::move(Shape));
}

/// enter ... exit in one block: the frontend's synchronized block.
void ShapeInserter::monitorPair(Function &F) {
  Instruction *At = pickPoint(F);
  if (!At)
    return;
  CallInst *Enter = callMonitor(EnterName, nullptr, At);
  Value *Obj = Enter->arg_empty() ? nullptr : Enter->getArgOperand(0);
  Instruction *ExitAt = At->getParent()->getTerminator();
  if (C.oneIn(3) && !isa<PHINode>(At) && !At->isEHPad())
    ExitAt = At;
  callMonitor(ExitName, Obj, ExitAt);
}

/// enter in one block, exit in another: structured or not, depending on
/// the paths.
void ShapeInserter::monitorAcrossBlocks(Function &F) {
  Instruction *At = pickPoint(F);
  Instruction *Later = pickPoint(F);
  if (!At || !Later)
    return;
  CallInst *Enter = callMonitor(EnterName, nullptr, At);
  if (Enter->arg_empty())
    return;
  Value *Obj = Enter->getArgOperand(0);
  // The object must dominate the exit: a constant, a global or an argument
  // travels anywhere; anything else is replaced by an argument or null.
  if (isa<Instruction>(Obj->stripPointerCasts()) || isa<Instruction>(Obj))
    Obj = nullptr;
  for (Argument &A : F.args())
    if (!Obj && A.getType() == Enter->getArgOperand(0)->getType())
      Obj = &A;
  callMonitor(ExitName, Obj, Later);
}

/// enter at the entry, exit before each return: a synchronized method.
void ShapeInserter::wrapFunction(Function &F) {
  Instruction *At = &*F.getEntryBlock().getFirstInsertionPt();
  CallInst *Enter = callMonitor(EnterName, nullptr, At);
  if (Enter->arg_empty())
    return;
  Value *Obj = Enter->getArgOperand(0);
  if (isa<Instruction>(Obj))
    return;
  for (BasicBlock &BB : F)
    if (isa<ReturnInst>(BB.getTerminator()))
      callMonitor(ExitName, Obj, BB.getTerminator());
}

void ShapeInserter::loneCall(Function &F) {
  Instruction *At = pickPoint(F);
  if (!At)
    return;
  switch (C.below(4)) {
  case 0:
    callMonitor(EnterName, nullptr, At);
    break;
  case 1:
    callMonitor(ExitName, nullptr, At);
    break;
  case 2:
    CallInst::Create(jitlockFunction(PollName), "", At);
    break;
  default: {
    CallInst *T = CallInst::Create(jitlockFunction(ThreadName), "t", At);
    if (C.oneIn(2))
      new StoreInst(T, pickObject(At, PointerType::getUnqual(Ctx)), At);
    break;
  }
  }
}

/// What a careless frontend writes: a wrong signature, an unknown name, a
/// jitlock function's address.
void ShapeInserter::badCall(Function &F) {
  Instruction *At = pickPoint(F);
  if (!At)
    return;
  Type *I32 = Type::getInt32Ty(Ctx);
  Type *Ptr = PointerType::getUnqual(Ctx);
  switch (C.below(4)) {
  case 0: {
    // The right name, the wrong type at the call.
    FunctionCallee Callee = jitlockFunction(EnterName);
    CallInst::Create(FunctionType::get(Type::getVoidTy(Ctx), {I32}, false),
                     Callee.getCallee(), {ConstantInt::get(I32, 1)}, "", At);
    break;
  }
  case 1: {
    FunctionCallee Unknown = M.getOrInsertFunction(
        "jitlock.monitor.enter.slow",
        FunctionType::get(Type::getVoidTy(Ctx), {Ptr}, false));
    CallInst::Create(
        Unknown, {ConstantPointerNull::get(cast<PointerType>(Ptr))}, "", At);
    break;
  }
  case 2:
    new StoreInst(jitlockFunction(C.oneIn(2) ? ExitName : PollName).getCallee(),
                  pickObject(At, Ptr), At);
    break;
  default: {
    // A variadic declaration, or one that returns a value.
    StringRef Name = C.oneIn(2) ? ThreadName : PollName;
    if (M.getFunction(Name))
      return;
    FunctionCallee Callee = M.getOrInsertFunction(
        Name, FunctionType::get(I32, {I32}, /*isVarArg=*/C.oneIn(2)));
    CallInst::Create(Callee, {ConstantInt::get(I32, 7)}, "bad", At);
    break;
  }
  }
}

void ShapeInserter::setStackBang(Function &F) {
  static const char *const Values[] = {
      "",           "0",  "64",         "4096",       "65536",
      "1073741824", "-1", "1073741825", "0x10",       "12abc",
      " 8",         "+8", "9z",         "4294967296", "18446744073709551616"};
  F.addFnAttr("jitlock-stack-bang", Values[C.below(std::size(Values))]);
  if (C.oneIn(8))
    F.addFnAttr(Attribute::Naked);
  if (C.oneIn(8))
    F.addFnAttr("probe-stack", C.oneIn(2) ? "inline-asm" : "__probestack");
}

void ShapeInserter::markThreadParameter(Function &F) {
  if (F.arg_empty())
    return;
  unsigned N = C.below(F.arg_size());
  F.addParamAttr(N, Attribute::get(Ctx, "jitlock.thread"));
  if (C.oneIn(4) && F.arg_size() > 1)
    F.addParamAttr((N + 1) % F.arg_size(),
                   Attribute::get(Ctx, "jitlock.thread"));
}

void ShapeInserter::addModuleFlag() {
  static const char *const Keys[] = {
      "jitlock.thread",   "jitlock.tls-offset",     "jitlock.header-offset",
      "jitlock.capacity", "jitlock.stack-bang",     "jitlock.locking",
      "jitlock.polls",    "jitlock.lowered-layout", "jitlock.lowered-thread"};
  static const char *const Strings[] = {"tls",
                                        "arg",
                                        "call",
                                        "watermark",
                                        "always",
                                        "none",
                                        "heavy",
                                        "lightweight",
                                        "explicit",
                                        "auto",
                                        "tls;tls-offset=-64",
                                        "bogus",
                                        ""};
  static const int64_t Ints[] = {0, 8, -8, 3, -320, 1 << 20, INT64_MIN};
  const char *Key = Keys[C.below(std::size(Keys))];
  if (M.getModuleFlag(Key))
    return;
  if (C.oneIn(2))
    M.addModuleFlag(Module::Error, Key,
                    MDString::get(Ctx, Strings[C.below(std::size(Strings))]));
  else
    M.addModuleFlag(Module::Error, Key,
                    ConstantInt::get(Type::getInt64Ty(Ctx),
                                     Ints[C.below(std::size(Ints))]));
}

/// A jitlock.* name on a global variable, an alias or an ifunc, sometimes
/// called.
void ShapeInserter::addJitlockGlobal() {
  static const char *const Names[] = {EnterName, ExitName, PollName, ThreadName,
                                      "jitlock.other"};
  StringRef Name = Names[C.below(std::size(Names))];
  if (M.getNamedValue(Name))
    return;
  Type *I64 = Type::getInt64Ty(Ctx);
  auto *Target = new GlobalVariable(M, I64, false, GlobalValue::InternalLinkage,
                                    ConstantInt::get(I64, 1),
                                    freshName("jitlock_fuzz_target"));
  GlobalValue *GV;
  switch (C.below(3)) {
  case 0:
    GV = new GlobalVariable(M, I64, false, GlobalValue::ExternalLinkage,
                            ConstantInt::get(I64, 0), Name);
    break;
  case 1:
    GV = GlobalAlias::create(I64, 0, GlobalValue::ExternalLinkage, Name, Target,
                             &M);
    break;
  default: {
    auto *Resolver = Function::Create(
        FunctionType::get(PointerType::getUnqual(Ctx), false),
        GlobalValue::InternalLinkage, freshName("jitlock_fuzz_resolver"), M);
    ReturnInst::Create(Ctx, Target, BasicBlock::Create(Ctx, "entry", Resolver));
    GV = GlobalIFunc::create(Type::getVoidTy(Ctx), 0,
                             GlobalValue::ExternalLinkage, Name, Resolver, &M);
    break;
  }
  }
  if (C.oneIn(2))
    return;
  Function *F = pickFunction();
  if (Instruction *At = pickPoint(*F))
    CallInst::Create(FunctionType::get(Type::getVoidTy(Ctx), false), GV, "",
                     At);
}

/// Turns a call of a jitlock function into an invoke whose unwind edge goes
/// to a fresh landing pad (a funclet-less personality is given to the
/// function when it has none).
void ShapeInserter::makeInvoke(Function &F) {
  SmallVector<CallInst *, 8> Calls;
  for (Instruction &I : instructions(F))
    if (auto *CI = dyn_cast<CallInst>(&I))
      if (Function *Callee = CI->getCalledFunction();
          Callee && Callee->getName().starts_with("jitlock.") &&
          !CI->isMustTailCall())
        Calls.push_back(CI);
  if (Calls.empty())
    return;
  if (F.hasPersonalityFn()) {
    // A landing pad under a funclet personality does not verify.
    if (!isa<Function>(F.getPersonalityFn()) ||
        F.getPersonalityFn()->getName() != "__gxx_personality_v0")
      return;
  } else {
    F.setPersonalityFn(cast<Function>(
        M.getOrInsertFunction("__gxx_personality_v0",
                              FunctionType::get(Type::getInt32Ty(Ctx), true))
            .getCallee()));
  }
  CallInst *Call = pick(Calls);
  BasicBlock *BB = Call->getParent();
  BasicBlock *Normal = BB->splitBasicBlock(Call->getNextNode(), "normal");
  auto *Pad = BasicBlock::Create(Ctx, "pad", &F);
  Type *PadTy =
      StructType::get(PointerType::getUnqual(Ctx), Type::getInt32Ty(Ctx));
  auto *LP = LandingPadInst::Create(PadTy, 0, "lp", Pad);
  LP->setCleanup(true);
  // The normal destination does not see a value the call returns.
  if (C.oneIn(2) || !Call->use_empty())
    ResumeInst::Create(LP, Pad);
  else
    BranchInst::Create(Normal, Pad);
  SmallVector<Value *, 1> Args(Call->args());
  SmallVector<OperandBundleDef, 1> Bundles;
  Call->getOperandBundlesAsDefs(Bundles);
  auto *Invoke =
      InvokeInst::Create(Call->getFunctionType(), Call->getCalledOperand(),
                         Normal, Pad, Args, Bundles, "", BB->getTerminator());
  Invoke->takeName(Call);
  Call->replaceAllUsesWith(Invoke);
  Call->eraseFromParent();
  BB->getTerminator()->eraseFromParent();
}

void ShapeInserter::markCoroutine(Function &F) {
  if (C.oneIn(2)) {
    F.addFnAttr(Attribute::PresplitCoroutine);
    return;
  }
  // A suspend point with no coroutine around it: only jitlock's passes look
  // at it (the default pipelines skip such modules, see RunInput.cpp).
  Instruction *At = pickPoint(F);
  if (!At)
    return;
  FunctionCallee Suspend = M.getOrInsertFunction(
      "llvm.coro.suspend",
      FunctionType::get(Type::getInt8Ty(Ctx),
                        {Type::getTokenTy(Ctx), Type::getInt1Ty(Ctx)}, false));
  CallInst::Create(Suspend,
                   {ConstantTokenNone::get(Ctx), ConstantInt::getFalse(Ctx)},
                   "s", At);
}

void ShapeInserter::insertOne() {
  switch (C.below(20)) {
  case 0:
  case 1:
  case 2:
    return monitorPair(*pickFunction());
  case 3:
  case 4:
    return monitorAcrossBlocks(*pickFunction());
  case 5:
    return wrapFunction(*pickFunction());
  case 6:
  case 7:
  case 8:
    return loneCall(*pickFunction());
  case 9:
    return badCall(*pickFunction());
  case 10:
    return setStackBang(*pickFunction());
  case 11:
    return markThreadParameter(*pickFunction());
  case 12:
    return addModuleFlag();
  case 13:
    return addJitlockGlobal();
  case 14:
    return makeInvoke(*pickFunction());
  case 15:
    return markCoroutine(*pickFunction());
  case 16:
    return linkTemplate(CoroutineTemplate);
  case 17:
    return linkTemplate(FuncletTemplate);
  case 18:
    return linkTemplate(LandingPadTemplate);
  default:
    return linkTemplate(AddrSpaceTemplate);
  }
}

} // namespace

void insertShapes(Module &M, Choices &C, unsigned Count) {
  ShapeInserter Shapes(M, C);
  for (unsigned I = 0; I < Count; ++I)
    Shapes.insertOne();
}

std::unique_ptr<Module> generateModule(LLVMContext &Ctx, Choices &C) {
  static const char *const Triples[] = {
      "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu",
      "x86_64-pc-windows-msvc", "", "riscv64-unknown-linux-gnu"};
  auto M = std::make_unique<Module>("generated", Ctx);
  M->setTargetTriple(Triples[C.below(std::size(Triples))]);
  ShapeInserter Shapes(*M, C);
  for (unsigned N = 1 + C.below(3); N; --N)
    Shapes.addSkeleton();
  insertShapes(*M, C, 1 + C.below(24));
  return M;
}

} // namespace jitlock::fuzz
