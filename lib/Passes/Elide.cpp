//===- Elide.cpp - Removing monitor pairs that cannot matter --------------===//
//
// jitlock-elide merges adjacent regions on one object (lock coarsening,
// RegionCoarsener below), then removes two kinds of enter/exit pairs
// (docs/deopt.md):
//
//   - nested re-entry: a pair on an object that the function already holds
//     around it (the same SSA value, pointer casts stripped). The object
//     stays locked throughout; only its recursion count is one lower.
//   - non-escaping objects: every pair on an object from an allocation this
//     pass recognizes (allockind("alloc"), a noalias return, or a configured
//     allocator) that provably never escapes, as LLVM's CaptureTracking
//     decides with the object's own monitor operations taken as not
//     capturing. No other thread can reach the object, so none can contend.
//
// A removed call is not deleted: it becomes a marker,
// jitlock.monitor.elided.enter/exit, an opaque call that nothing moves,
// because the frame must still own the lock should it deoptimize inside the
// pair. LLVM takes the operands of a "deopt" bundle as not capturing, so the
// deopt runtime can only learn of such a lock from the monitor list that
// jitlock-deopt-state builds from the markers and then deletes.
//
// Each elision is checked on the function as it would be after it, with the
// acquisition-ordered monitor list of MonitorDataflow.h: wherever the
// monitors were known they must stay known, every elided exit must find its
// elided enter, no elided monitor may be open at a return, and a nested
// elided hold must sit inside a real one at every point. A candidate that
// fails is kept, with a missed remark saying why.
//
//===----------------------------------------------------------------------===//
#include "IRInterface.h"
#include "MonitorDataflow.h"
#include "jitlock/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Analysis/CaptureTracking.h"
#include "llvm/Analysis/OptimizationRemarkEmitter.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "jitlock-elide"

using namespace llvm;

STATISTIC(NumElidedNested, "Nested monitor re-entries elided");
STATISTIC(NumElidedLocal, "Monitors of non-escaping objects elided");
STATISTIC(NumKept, "Elision candidates kept");
STATISTIC(NumCoarsened, "Adjacent monitor regions merged");

namespace jitlock {

static Error elideError(const Twine &Msg) {
  return make_error<StringError>(Msg, inconvertibleErrorCode());
}

Expected<LoweringConfig> LoweringConfig::parseElide(StringRef Params) {
  LoweringConfig C;
  if (Params.empty())
    return C;
  if (Params.consume_front("coarsen-limit=")) {
    auto [Number, Rest] = Params.split(';');
    uint32_t Limit;
    if (Number.getAsInteger(10, Limit))
      return elideError("coarsen-limit= needs a number of instructions, not '" +
                        Number + "'");
    C.CoarsenLimit = Limit;
    Params = Rest;
    if (Params.empty())
      return C;
  }
  if (!Params.consume_front("allocators="))
    return elideError("unknown jitlock-elide parameter '" +
                      Params.split(';').first +
                      "' (expected coarsen-limit=N or allocators=name1;name2)");
  C.Allocators.emplace();
  SmallVector<StringRef, 4> Names;
  Params.split(Names, ';');
  for (StringRef Name : Names) {
    if (Name.empty())
      return elideError("allocators= has an empty name");
    C.Allocators->push_back(Name.str());
  }
  return C;
}

namespace {

/// The configured allocators: the pass configuration, or the module flag
/// jitlock.allocators ("name1;name2"); both set and different is a
/// conflicting configuration.
Expected<DenseSet<StringRef>> allocatorNames(const Module &M,
                                             const LoweringConfig &Config) {
  std::optional<SmallVector<StringRef, 4>> FromFlag;
  if (Metadata *MD = M.getModuleFlag("jitlock.allocators")) {
    auto *S = dyn_cast<MDString>(MD);
    if (!S)
      return elideError("module flag jitlock.allocators must be a string "
                        "\"name1;name2\"");
    FromFlag.emplace();
    if (!S->getString().empty())
      S->getString().split(*FromFlag, ';', -1, /*KeepEmpty=*/false);
  }
  DenseSet<StringRef> Names;
  if (Config.Allocators) {
    for (const std::string &Name : *Config.Allocators)
      Names.insert(Name);
    if (FromFlag &&
        (Names.size() != FromFlag->size() ||
         any_of(*FromFlag, [&](StringRef N) { return !Names.contains(N); })))
      return elideError("conflicting configuration: allocators differ "
                        "between the pass configuration and module flag "
                        "jitlock.allocators");
    return Names;
  }
  if (FromFlag)
    Names.insert(FromFlag->begin(), FromFlag->end());
  return Names;
}

/// "%tmp" or "@g": how remarks name an object.
std::string nameOf(const Value &V) {
  std::string Text;
  raw_string_ostream OS(Text);
  V.printAsOperand(OS, /*PrintType=*/false);
  return Text;
}

/// "(<instruction>)", for the reasons remarks give.
std::string printed(const Instruction &I) {
  std::string Text;
  raw_string_ostream OS(Text);
  I.print(OS);
  return "(" + StringRef(Text).trim().str() + ")";
}

/// "(at <instruction>)".
std::string at(const Instruction &I) { return "(at " + printed(I).substr(1); }

/// Finds the first use that may capture an object, taking its own monitor
/// operations as not capturing, and says what it is. Any other jitlock call
/// on the object (a runtime wait, notify or hash) counts as a capture even
/// when its declaration says nocapture: the lock must stay for it.
class EscapeFinder : public CaptureTracker {
public:
  explicit EscapeFinder(const Value *Obj) : Obj(Obj) {}

  void tooManyUses() override { Reason = "it has too many uses to analyse"; }
  bool shouldExplore(const Use *U) override {
    if (auto *CB = dyn_cast<CallBase>(U->getUser()))
      if (!isOwnMonitorOperation(*CB, *U))
        if (const Function *F = CB->getCalledFunction();
            F && F->getName().starts_with("jitlock") && Reason.empty())
          Reason = isJitlockCall(*CB)
                       ? "a monitor operation locks a pointer derived from "
                         "it " +
                             printed(*CB)
                       : "it is passed to '" + F->getName().str() +
                             "', which needs the lock";
    return true;
  }
  bool captured(const Use *U) override {
    auto *CB = dyn_cast<CallBase>(U->getUser());
    if (CB && isOwnMonitorOperation(*CB, *U))
      return false;
    if (Reason.empty())
      Reason = describeCapture(*U);
    return true;
  }
  /// Empty when the object does not escape.
  std::string Reason;

private:
  bool isOwnMonitorOperation(const CallBase &CB, const Use &U) const {
    return CB.isArgOperand(&U) && CB.getArgOperandNo(&U) == 0 &&
           (isWellFormedCall(CB, MonitorEnterName) ||
            isWellFormedCall(CB, MonitorExitName)) &&
           lockedObject(CB) == Obj;
  }
  static std::string describeCapture(const Use &U) {
    const auto *I = cast<Instruction>(U.getUser());
    std::string At = printed(*I);
    if (auto *SI = dyn_cast<StoreInst>(I)) {
      const Value *To = SI->getPointerOperand()->stripPointerCasts();
      if (isa<GlobalValue>(To))
        return "it is stored to global " + nameOf(*To) + " " + At;
      return "it is stored to memory at " + nameOf(*To) + " " + At;
    }
    if (isa<ReturnInst>(I))
      return "it is returned " + At;
    if (isa<PtrToIntInst>(I))
      return "its address is taken as an integer " + At;
    if (auto *CB = dyn_cast<CallBase>(I)) {
      const Function *F = CB->getCalledFunction();
      if (!F)
        return "it is passed to an indirect call " + At;
      if (F->isIntrinsic())
        return "it is passed to intrinsic '" + F->getName().str() + "' " + At;
      return "it is passed to '" + F->getName().str() +
             "', which may capture it " + At;
    }
    return "it is used by an instruction that may capture it " + At;
  }

  const Value *Obj;
};

/// The allocator `V` comes from, if it is a call the pass recognizes.
const Function *recognizedAllocator(const Value &V,
                                    const DenseSet<StringRef> &Allocators) {
  const auto *CB = dyn_cast<CallBase>(&V);
  const Function *F = CB ? CB->getCalledFunction() : nullptr;
  if (!F)
    return nullptr;
  Attribute Kind = CB->getFnAttr(Attribute::AllocKind);
  if ((Kind.isValid() &&
       (Kind.getAllocKind() & AllocFnKind::Alloc) != AllocFnKind::Unknown) ||
      CB->hasRetAttr(Attribute::NoAlias) || Allocators.contains(F->getName()))
    return F;
  return nullptr;
}

/// Merges adjacent regions on one object: an exit of it followed by an enter
/// of it, with nothing between them that may block, call out, poll or
/// deoptimize, lose both, and the object stays held across the gap. The gap
/// is straight-line code: a block, or blocks that follow one another
/// through unconditional branches into blocks with no other predecessor, so
/// no path enters the merged region's middle, and a loop back-edge (whose
/// target has a second predecessor) never merges. A merged region stays at
/// most `Limit` instructions from its enter to its exits, counting the
/// regions merged before it, so the time it runs without a poll of its own
/// stays bounded. No deopt point is in the gap (docs/deopt.md, "Lock
/// coarsening"): every deopt point keeps the monitors it had.
class RegionCoarsener {
public:
  RegionCoarsener(Function &F, unsigned Limit, OptimizationRemarkEmitter &ORE)
      : F(F), Limit(Limit), ORE(ORE), DT(F) {}
  void run();

private:
  /// The enter of `X`'s object that a mergeable gap leads to from `X`, with
  /// the gap's instructions in `Gap`; else null, with `Reason` set when an
  /// enter of the object follows a gap that cannot be held.
  CallInst *nextEnter(CallBase &X, unsigned &Gap, std::string &Reason);
  /// The instructions of the hold `Bound` ends (backward: an exit, up to its
  /// enter) or begins (forward: an enter, up to its exits), counting stopped
  /// past `Budget`; none when a path leaves the function without meeting
  /// the other end.
  std::optional<unsigned> regionSize(CallBase &Bound, bool Forward,
                                     unsigned Budget);
  void kept(const Instruction &At, const Value &Obj, StringRef Reason);

  Function &F;
  unsigned Limit;
  OptimizationRemarkEmitter &ORE;
  DominatorTree DT;
};

/// Whether a call is an LLVM intrinsic that returns without synchronizing
/// with another thread (nosync, willreturn) and carries no deopt state.
bool isNonBlockingIntrinsic(const CallBase &CB) {
  const Function *Callee = CB.getCalledFunction();
  return Callee && Callee->isIntrinsic() && !CB.hasOperandBundles() &&
         CB.hasFnAttr(Attribute::NoSync) && CB.hasFnAttr(Attribute::WillReturn);
}

bool isMonitorCallOn(const Instruction &I, StringRef Name, const Value *Obj) {
  const auto *CB = dyn_cast<CallBase>(&I);
  return CB && isWellFormedCall(*CB, Name) && lockedObject(*CB) == Obj;
}

void RegionCoarsener::run() {
  SmallVector<CallBase *, 8> Exits;
  for (Instruction &I : instructions(F))
    if (auto *CB = dyn_cast<CallBase>(&I);
        CB && isWellFormedCall(*CB, MonitorExitName))
      Exits.push_back(CB);
  for (CallBase *X : Exits) {
    const Value *Obj = lockedObject(*X);
    unsigned Gap = 0;
    std::string Reason;
    CallInst *E = nextEnter(*X, Gap, Reason);
    if (!E) {
      if (!Reason.empty())
        kept(*X, *Obj, Reason);
      continue;
    }
    std::optional<unsigned> Before =
        regionSize(*X, /*Forward=*/false, Limit - Gap);
    std::optional<unsigned> After =
        Before ? regionSize(*E, /*Forward=*/true, Limit - Gap - *Before)
               : std::nullopt;
    if (!After) {
      kept(*X, *Obj, "the regions' bounds are not known on every path");
      continue;
    }
    unsigned Size = *Before + Gap + *After;
    if (Size > Limit) {
      kept(*X, *Obj,
           "the merged region would exceed the coarsening limit of " +
               std::to_string(Limit) + " instructions");
      continue;
    }
    ++NumCoarsened;
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "LockCoarsened", E)
             << "monitor regions of " << ore::NV("Object", nameOf(*Obj))
             << " in '" << ore::NV("Function", F.getName())
             << "' coarsened: the exit and the next enter merged, the region "
                "now spans "
             << ore::NV("Instructions", Size) << " instructions";
    });
    X->eraseFromParent();
    E->eraseFromParent();
  }
}

CallInst *RegionCoarsener::nextEnter(CallBase &X, unsigned &Gap,
                                     std::string &Reason) {
  const Value *Obj = lockedObject(X);
  SmallPtrSet<BasicBlock *, 4> Seen{X.getParent()};
  // Past the first thing that cannot be held, the walk only looks for the
  // enter, to say why it was not merged; it ends where it began.
  Instruction *I = X.getNextNode();
  while (I && I != &X) {
    if (auto *Br = dyn_cast<BranchInst>(I)) {
      if (Br->isConditional())
        break;
      BasicBlock *Succ = Br->getSuccessor(0);
      if (Reason.empty() && DT.dominates(Succ, Br->getParent()))
        Reason = "a loop back-edge is between them " + at(*I);
      else if (Reason.empty() && !Succ->getSinglePredecessor())
        Reason = "another path joins between them " + at(*I);
      if (!Seen.insert(Succ).second && Succ != X.getParent())
        break;
      I = &Succ->front();
      continue;
    }
    if (I->isTerminator())
      break;
    if (isMonitorCallOn(*I, MonitorEnterName, Obj)) {
      auto *E = dyn_cast<CallInst>(I);
      if (Reason.empty() && !E)
        Reason = "the enter is an invoke " + at(*I);
      return Reason.empty() ? E : nullptr;
    }
    Instruction *Here = I;
    I = I->getNextNode();
    if (!Reason.empty() || isa<DbgInfoIntrinsic>(Here))
      continue;
    if (++Gap > Limit)
      break; // The enter is too far away to matter.
    auto *CB = dyn_cast<CallBase>(Here);
    if (!CB || isNonBlockingIntrinsic(*CB))
      continue;
    if (CB->getOperandBundle(LLVMContext::OB_deopt))
      Reason = "a deopt point is between them " + at(*CB);
    else if (isWellFormedCall(*CB, SafepointPollName))
      Reason = "a safepoint poll is between them " + at(*CB);
    else if (isJitlockCall(*CB))
      Reason = "another monitor operation is between them " + at(*CB);
    else
      Reason = "a call that may block is between them " + at(*CB);
  }
  Reason.clear(); // No enter of the object follows: nothing was kept.
  return nullptr;
}

std::optional<unsigned>
RegionCoarsener::regionSize(CallBase &Bound, bool Forward, unsigned Budget) {
  const Value *Obj = lockedObject(Bound);
  // Going forward an enter nests deeper and an exit ends the hold; going
  // backward the other way around.
  StringRef Deeper = Forward ? MonitorEnterName : MonitorExitName;
  StringRef Ends = Forward ? MonitorExitName : MonitorEnterName;
  auto Step = [&](Instruction *I) {
    return Forward ? I->getNextNode() : I->getPrevNode();
  };
  struct Item {
    BasicBlock *BB;
    Instruction *I; // The next to look at; null at the block's end.
    unsigned Depth;
  };
  SmallVector<Item, 8> Work{{Bound.getParent(), Step(&Bound), 0}};
  SmallPtrSet<const BasicBlock *, 8> Seen{Bound.getParent()};
  unsigned Size = 0;
  while (!Work.empty()) {
    auto [BB, I, Depth] = Work.pop_back_val();
    bool Ended = false;
    for (; I && !Ended; I = Step(I)) {
      if (isMonitorCallOn(*I, Deeper, Obj))
        ++Depth;
      else if (isMonitorCallOn(*I, Ends, Obj) && Depth-- == 0)
        Ended = true;
      if (!Ended && !isa<DbgInfoIntrinsic>(I) && ++Size > Budget)
        return Size;
    }
    if (Ended)
      continue;
    if (Forward) {
      if (isa<ReturnInst, ResumeInst>(BB->getTerminator()))
        return std::nullopt;
      for (BasicBlock *Succ : successors(BB))
        if (MonitorOps::isRealEdge(BB, Succ) && Seen.insert(Succ).second)
          Work.push_back({Succ, &Succ->front(), Depth});
    } else {
      if (BB->isEntryBlock())
        return std::nullopt;
      for (BasicBlock *Pred : predecessors(BB))
        if (MonitorOps::isRealEdge(Pred, BB) && Seen.insert(Pred).second)
          Work.push_back({Pred, Pred->getTerminator(), Depth});
    }
  }
  return Size;
}

void RegionCoarsener::kept(const Instruction &At, const Value &Obj,
                           StringRef Reason) {
  ORE.emit([&] {
    return OptimizationRemarkMissed("jitlock", "LockNotCoarsened", &At)
           << "monitor regions of " << ore::NV("Object", nameOf(Obj)) << " in '"
           << ore::NV("Function", F.getName()) << "' not coarsened: " << Reason;
  });
}

class FunctionElider {
public:
  FunctionElider(Function &F, FunctionCallee Enter, FunctionCallee Exit,
                 FunctionCallee ElidedEnter, FunctionCallee ElidedExit,
                 const DenseSet<StringRef> &Allocators, unsigned CoarsenLimit)
      : F(F), Enter(Enter), Exit(Exit), ElidedEnter(ElidedEnter),
        ElidedExit(ElidedExit), Allocators(Allocators),
        CoarsenLimit(CoarsenLimit), ORE(&F) {}
  void run();

private:
  /// The monitor list before each operation reached, in order, and the
  /// operations by key.
  struct Snapshot {
    explicit Snapshot(Function &F) : Ops(F), ByKey(Ops.Keys.size()) {
      MonitorList Domain;
      MonitorDataflow<MonitorList> Flow(Ops, Domain);
      Flow.run();
      Flow.forEachOp([&](const MonitorOp &O, const MonitorList::State &S) {
        Before[O.I] = Visited.size();
        Visited.push_back({O, S});
        if (O.isEnter() || O.isExit())
          ByKey[O.Key].push_back(O);
      });
    }
    const MonitorList::State *before(const Instruction *I) const {
      auto It = Before.find(I);
      return It == Before.end() ? nullptr : &Visited[It->second].second;
    }
    MonitorOps Ops;
    SmallVector<std::pair<MonitorOp, MonitorList::State>, 16> Visited;
    DenseMap<const Instruction *, unsigned> Before;
    SmallVector<SmallVector<MonitorOp, 4>, 8> ByKey;
  };

  /// Why the function's monitors are not known everywhere, or empty.
  static std::string unstructured(const Snapshot &S);
  void elideLocalObjects(const Snapshot &Orig, StringRef Unstructured);
  void elideNestedReentries(const Snapshot &Orig, StringRef Unstructured);
  /// Turns `Calls` into elided markers, checks the function, and undoes it
  /// when the check fails; returns the failure, empty on success.
  std::string tryElide(const Value *Obj, ArrayRef<CallBase *> Calls,
                       bool Nested);
  std::string check(const Value *Obj, bool Nested);
  void kept(const Instruction &At, const Value &Obj, const Twine &What,
            StringRef Reason);

  Function &F;
  FunctionCallee Enter, Exit, ElidedEnter, ElidedExit;
  const DenseSet<StringRef> &Allocators;
  unsigned CoarsenLimit;
  OptimizationRemarkEmitter ORE;
};

std::string FunctionElider::unstructured(const Snapshot &S) {
  for (auto &[O, State] : S.Visited)
    if (State.Unknown)
      return "the function's monitors are not known on every path " + at(*O.I);
  return "";
}

void FunctionElider::run() {
  // Elision needs every point's monitors known, before and after: only
  // then does an elided hold stand for exactly one real one.
  std::string Unstructured;
  {
    Snapshot Orig(F);
    if (!Orig.Ops.hasMonitors())
      return;
    Unstructured = unstructured(Orig);
  }
  // First: merging a chain of regions inside a held one leaves one inner
  // pair, a nested re-entry, where each of the chain's pairs would have
  // matched the others' exits too.
  if (CoarsenLimit && Unstructured.empty())
    RegionCoarsener(F, CoarsenLimit, ORE).run();
  elideLocalObjects(Snapshot(F), Unstructured);
  elideNestedReentries(Snapshot(F), Unstructured);
}

void FunctionElider::kept(const Instruction &At, const Value &Obj,
                          const Twine &What, StringRef Reason) {
  ++NumKept;
  ORE.emit([&] {
    return OptimizationRemarkMissed("jitlock", "LockKept", &At)
           << What.str() << " " << ore::NV("Object", nameOf(Obj)) << " in '"
           << ore::NV("Function", F.getName()) << "' kept: " << Reason;
  });
}

void FunctionElider::elideLocalObjects(const Snapshot &Orig,
                                       StringRef Unstructured) {
  for (auto [Key, Ops] : enumerate(Orig.ByKey)) {
    const MonitorKey &K = Orig.Ops.Keys[Key];
    const Function *Allocator = recognizedAllocator(*K.Obj, Allocators);
    if (K.Elided || !Allocator)
      continue;
    const Instruction &First = *Ops.front().I;
    EscapeFinder Finder(K.Obj);
    PointerMayBeCaptured(K.Obj, &Finder);
    if (!Finder.Reason.empty()) {
      kept(First, *K.Obj, "monitor of", "the object escapes: " + Finder.Reason);
      continue;
    }
    if (!Unstructured.empty()) {
      kept(First, *K.Obj, "monitor of", Unstructured);
      continue;
    }
    SmallVector<CallBase *, 4> Calls;
    for (const MonitorOp &O : Ops)
      Calls.push_back(cast<CallBase>(O.I));
    std::string Failure = tryElide(K.Obj, Calls, /*Nested=*/false);
    if (!Failure.empty()) {
      kept(First, *K.Obj, "monitor of", Failure);
      continue;
    }
    NumElidedLocal += Calls.size() / 2;
    ORE.emit([&] {
      return OptimizationRemark("jitlock", "LockElided", &First)
             << "monitor of " << ore::NV("Object", nameOf(*K.Obj)) << " in '"
             << ore::NV("Function", F.getName())
             << "' elided: the object never escapes (allocated by '"
             << ore::NV("Allocator", Allocator->getName()) << "')";
    });
  }
}

void FunctionElider::elideNestedReentries(const Snapshot &Orig,
                                          StringRef Unstructured) {
  // Candidates from the function before any of them is elided; each is
  // checked against the function as the ones before it left it.
  DominatorTree DT(F);
  for (auto [Key, Ops] : enumerate(Orig.ByKey)) {
    if (Orig.Ops.Keys[Key].Elided)
      continue;
    for (const MonitorOp &E : Ops) {
      const MonitorList::State &Before = *Orig.before(E.I);
      if (!E.isEnter() || Before.Unknown || !is_contained(Before.Held, Key))
        continue;
      // The exits that release this acquisition: dominated by it, and with
      // one hold of the key more before them than before it. (Holds of one
      // object are interchangeable: an exit releases the latest; the check
      // below rejects a pairing that another acquisition came between.)
      size_t Holds = count(Before.Held, Key);
      SmallVector<CallBase *, 4> Calls{cast<CallBase>(E.I)};
      for (const MonitorOp &X : Ops) {
        const MonitorList::State &AtExit = *Orig.before(X.I);
        // An exit an earlier elision took is not this one's.
        if (X.isExit() && !AtExit.Unknown && DT.dominates(E.I, X.I) &&
            isWellFormedCall(*cast<CallBase>(X.I), MonitorExitName) &&
            size_t(count(AtExit.Held, Key)) == Holds + 1)
          Calls.push_back(cast<CallBase>(X.I));
      }
      const Value &Obj = *Orig.Ops.Keys[Key].Obj;
      if (Calls.size() == 1) {
        kept(*E.I, Obj, "nested monitor enter of",
             "no exit of it is dominated by this enter");
        continue;
      }
      std::string Failure = Unstructured.empty()
                                ? tryElide(&Obj, Calls, /*Nested=*/true)
                                : Unstructured.str();
      if (!Failure.empty()) {
        kept(*E.I, Obj, "nested monitor enter of", Failure);
        continue;
      }
      ++NumElidedNested;
      ORE.emit([&] {
        return OptimizationRemark("jitlock", "LockElided", E.I)
               << "nested monitor enter of " << ore::NV("Object", nameOf(Obj))
               << " in '" << ore::NV("Function", F.getName())
               << "' elided: the function already holds it around this pair";
      });
    }
  }
}

std::string FunctionElider::tryElide(const Value *Obj,
                                     ArrayRef<CallBase *> Calls, bool Nested) {
  for (CallBase *CB : Calls)
    CB->setCalledFunction(isWellFormedCall(*CB, MonitorEnterName) ? ElidedEnter
                                                                  : ElidedExit);
  std::string Failure = check(Obj, Nested);
  if (!Failure.empty())
    for (CallBase *CB : Calls)
      CB->setCalledFunction(
          isWellFormedCall(*CB, MonitorElidedEnterName) ? Enter : Exit);
  return Failure;
}

std::string FunctionElider::check(const Value *Obj, bool Nested) {
  Snapshot Now(F);
  std::optional<unsigned> HeldKey, ElidedKey;
  for (auto [N, K] : enumerate(Now.Ops.Keys))
    if (K.Obj == Obj)
      (K.Elided ? ElidedKey : HeldKey) = N;
  assert(ElidedKey && "the elided markers are the key's enters");
  for (auto &[O, Before] : Now.Visited) {
    if (Before.Unknown)
      return "eliding it would leave the monitors unknown on some path " +
             at(*O.I);
    MonitorList::State After = Before;
    MonitorList().apply(After, O);
    if (After.Unknown)
      return "eliding it would leave an exit without its enter " + at(*O.I);
    auto FirstElided = find(After.Held, *ElidedKey);
    if (FirstElided == After.Held.end())
      continue;
    if (O.Kind == MonitorOpKind::FrameExit)
      return "the function may leave with it held " + at(*O.I);
    // A nested elided hold sits inside a real one: after each elided enter
    // and each real exit, an open elided hold has a real one below it.
    if (Nested &&
        (O.Kind == MonitorOpKind::ElidedEnter ||
         O.Kind == MonitorOpKind::Exit) &&
        (!HeldKey || find(After.Held, *HeldKey) > FirstElided))
      return "the function would not hold it around this pair on every "
             "path " +
             at(*O.I);
  }
  return "";
}

} // namespace

PreservedAnalyses ElidePass::run(Module &M, ModuleAnalysisManager &) {
  Function *EnterFn = M.getFunction(MonitorEnterName);
  Function *ExitFn = M.getFunction(MonitorExitName);
  if (!EnterFn || !ExitFn || EnterFn->use_empty())
    return PreservedAnalyses::all();
  Expected<DenseSet<StringRef>> Allocators = allocatorNames(M, Config);
  if (!Allocators) {
    reportError(M.getContext(), toString(Allocators.takeError()));
    return PreservedAnalyses::all();
  }
  // The markers take the signatures of the calls they replace. A module
  // that declares them otherwise is diagnosed by jitlock-verify and left
  // alone here.
  FunctionType *EnterTy = EnterFn->getFunctionType();
  FunctionType *ExitTy = ExitFn->getFunctionType();
  for (auto [Name, Ty] : {std::pair(MonitorElidedEnterName, EnterTy),
                          std::pair(MonitorElidedExitName, ExitTy)})
    if (Function *Existing = M.getFunction(Name);
        Existing && Existing->getFunctionType() != Ty)
      return PreservedAnalyses::all();
  FunctionCallee ElidedEnter =
      M.getOrInsertFunction(MonitorElidedEnterName, EnterTy);
  FunctionCallee ElidedExit =
      M.getOrInsertFunction(MonitorElidedExitName, ExitTy);
  for (Function &F : M)
    if (!F.isDeclaration() && !F.hasOptNone())
      FunctionElider(
          F, FunctionCallee(EnterTy, EnterFn), FunctionCallee(ExitTy, ExitFn),
          ElidedEnter, ElidedExit, *Allocators,
          Config.CoarsenLimit.value_or(LoweringConfig::DefaultCoarsenLimit))
          .run();
  // Only the called function of some calls changed: the CFG stands.
  bool Changed = false;
  for (StringRef Name : {MonitorElidedEnterName, MonitorElidedExitName})
    if (Function *Marker = M.getFunction(Name)) {
      if (Marker->use_empty())
        Marker->eraseFromParent();
      else
        Changed = true;
    }
  if (!Changed)
    return PreservedAnalyses::all();
  PreservedAnalyses PA;
  PA.preserveSet<CFGAnalyses>();
  return PA;
}

} // namespace jitlock
