//===- Deoptimize.cpp - Uncommon traps and resuming in tier 0 -------------===//
//
// The Resume handler of libjitlock_deopt for tier 1's traps: by the time it
// runs the dispatcher has decoded the record and restored the frame's locks
// (jitlock_rt_restore_locks: an ELIDED monitor is now really held), so the
// tier-0 frames start holding exactly what the source holds there.
//
//===----------------------------------------------------------------------===//
#include "Deoptimize.h"
#include "Tier1.h"

#include "jitlock/Deopt.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

using namespace llvm;

namespace jitlock::java {

DeoptOptions DeoptOpts;

const char *trapReasonName(uint32_t Reason) {
  switch (TrapReason(Reason)) {
  case TrapReason::UnstableIf:
    return "unstable_if";
  case TrapReason::ClassCheck:
    return "class_check";
  case TrapReason::Unloaded:
    return "unloaded";
  case TrapReason::Dependency:
    return "dependency";
  }
  return "unknown";
}

namespace {

[[noreturn]] void badRecord(const std::string &Why) {
  errs() << "jitlock-java: deopt: malformed trap state: " << Why << "\n";
  std::abort();
}

/// One virtual frame of the bundle (outermost first), pointing into
/// DeoptFrame::Values.
struct VirtualFrame {
  Method *M;
  uint32_t Bci, NumLocals, NumStack, NumMonitors;
  const uint64_t *Locals, *Stack;
  size_t FirstMonitor;
};

/// Decodes the frontend operands of `F` (Deoptimize.h, docs/java.md).
std::vector<VirtualFrame> decodeFrames(const deopt::DeoptFrame &F,
                                       uint32_t &Reason) {
  const std::vector<uint64_t> &V = F.Values;
  size_t I = 0;
  auto Next = [&](const char *What) {
    if (I >= V.size())
      badRecord(std::string("it ends before ") + What);
    return V[I++];
  };
  uint64_t N = Next("the frame count");
  if (N == 0 || N > 64)
    badRecord("frame count " + std::to_string(N));
  std::vector<VirtualFrame> Frames;
  size_t Monitor = 0;
  for (uint64_t K = 0; K < N; ++K) {
    VirtualFrame VF;
    VF.M = reinterpret_cast<Method *>(uintptr_t(Next("a method")));
    VF.Bci = uint32_t(Next("a bci"));
    VF.NumLocals = uint32_t(Next("a local count"));
    VF.NumStack = uint32_t(Next("a stack depth"));
    VF.NumMonitors = uint32_t(Next("a monitor count"));
    if (!VF.M || VF.Bci >= VF.M->Code.size() ||
        VF.NumLocals > VF.M->MaxLocals || VF.NumStack > VF.M->MaxStack)
      badRecord("frame " + std::to_string(K) + " does not fit its method");
    if (V.size() - I < size_t(VF.NumLocals) + VF.NumStack)
      badRecord("frame " + std::to_string(K) + " lacks its slots");
    VF.Locals = V.data() + I;
    I += VF.NumLocals;
    VF.Stack = V.data() + I;
    I += VF.NumStack;
    VF.FirstMonitor = Monitor;
    Monitor += VF.NumMonitors;
    Frames.push_back(VF);
  }
  Reason = uint32_t(Next("the reason"));
  if (Monitor != F.Monitors.size())
    badRecord("the frames name " + std::to_string(Monitor) +
              " monitors, the record " + std::to_string(F.Monitors.size()));
  return Frames;
}

/// How -Xlog:deopt names an object: its class and its place among the
/// frame's monitors, stable across runs (addresses are not).
std::string nameOf(const deopt::DeoptFrame &F, const void *Obj) {
  for (size_t K = 0; K < F.Monitors.size(); ++K)
    if (F.Monitors[K].obj == Obj)
      return static_cast<const Object *>(Obj)->Cls->javaName() + "#" +
             std::to_string(K);
  return static_cast<const Object *>(Obj)->Cls->javaName() + "#?";
}

/// jitlock_lock_state's values in order, as the log spells them.
const char *lockStateName(uint32_t State) {
  static const char *const Names[] = {"unlocked", "fast", "inflated",
                                      "embedder", "reserved"};
  static_assert(JITLOCK_STATE_RESERVED == 4);
  return State <= JITLOCK_STATE_RESERVED ? Names[State] : "unknown";
}

void logTrap(VMThread *T, const deopt::DeoptFrame &F,
             const std::vector<VirtualFrame> &Frames, uint32_t Reason) {
  const VirtualFrame &In = Frames.back();
  std::string S = "jitlock-java: deopt: " + In.M->qualifiedName() + " bci " +
                  std::to_string(In.Bci) + " reason " + trapReasonName(Reason) +
                  " frames " + std::to_string(Frames.size()) + "\n";
  // The record's frames as decoded (slot values, which hold addresses too).
  for (const VirtualFrame &VF : Frames) {
    S += "jitlock-java: deopt:   frame " + VF.M->qualifiedName() + " bci " +
         std::to_string(VF.Bci) + " locals [";
    for (uint32_t K = 0; K < VF.NumLocals; ++K)
      S += (K ? ", " : "") + std::to_string(int64_t(VF.Locals[K]));
    S += "] stack [";
    for (uint32_t K = 0; K < VF.NumStack; ++K)
      S += (K ? ", " : "") + std::to_string(int64_t(VF.Stack[K]));
    S += "] monitors " + std::to_string(VF.NumMonitors) + "\n";
  }
  // What the record listed (the kinds differ with --elide=false), then the
  // lock state after the restore (which must not).
  S += "jitlock-java: deopt:   restored [";
  for (size_t K = 0; K < F.Monitors.size(); ++K)
    S += (K ? ", " : "") + nameOf(F, F.Monitors[K].obj) +
         (F.Monitors[K].kind == JITLOCK_RELOCK_ELIDED ? " elided" : " held");
  S += "]\n";
  // The lock stack holds fast-locked entries only; an inflated hold is
  // seen through its owner below.
  void *Stack[256];
  size_t Depth = jitlock_rt_lock_stack(T->Rt, Stack, 256);
  S += "jitlock-java: deopt:   lock stack [";
  for (size_t K = 0; K < Depth && K < 256; ++K)
    S += (K ? ", " : "") + nameOf(F, Stack[K]);
  S += "]\n";
  // With its owner's hold count: an object the record lists twice (a
  // nested re-entry) must be held twice. The state tells a fast lock from a
  // hold of an object reserved to the thread (--locking=reserved).
  for (size_t K = 0; K < F.Monitors.size(); ++K) {
    const jitlock_relock_entry &E = F.Monitors[K];
    jitlock_lock_info Info;
    jitlock_rt_inspect(E.obj, &Info);
    S += "jitlock-java: deopt:   monitor " + nameOf(F, E.obj) + " owner " +
         (Info.owner == T->Rt ? "self"
          : Info.owner        ? "other"
                              : "none") +
         " holds " + std::to_string(Info.holds) + " state " +
         lockStateName(Info.state) + "\n";
  }
  errs() << S;
}

uint64_t resumeTrap(const deopt::DeoptFrame &F, void *) {
  VMThread *T = currentVMThread();
  if (!T)
    badRecord("a trap on a thread the VM does not know");
  uint32_t Reason;
  std::vector<VirtualFrame> Frames = decodeFrames(F, Reason);
  if (DeoptOpts.Log)
    logTrap(T, F, Frames, Reason);

  // A speculation's trap counts against the compiled (outermost) method.
  // A lazy deoptimization does not: the code was invalidated already, and
  // the method's Entry may be newer code by now.
  if (TrapReason(Reason) != TrapReason::Dependency) {
    Method *Compiled = Frames.front().M;
    uint32_t Traps =
        Compiled->Traps.fetch_add(1, std::memory_order_relaxed) + 1;
    invalidateTier1(Compiled, Traps < DeoptOpts.MaxTraps);
  }

  Slot Result = 0;
  const Method *Callee = nullptr;
  for (size_t K = Frames.size(); K-- > 0;) {
    const VirtualFrame &VF = Frames[K];
    ResumeState R{VF.M,        VF.Bci,  VF.Locals, VF.NumLocals, VF.Stack,
                  VF.NumStack, nullptr, Callee,    Result};
    // A synchronized method's own monitor is its frame's outermost.
    if (VF.M->isSynchronized()) {
      if (!VF.NumMonitors)
        badRecord("synchronized " + VF.M->qualifiedName() +
                  " holds no monitor");
      R.SyncObj = static_cast<Object *>(F.Monitors[VF.FirstMonitor].obj);
    }
    Result = resumeInterpreted(T, R);
    Callee = VF.M;
  }
  return Result;
}

const deopt::DeoptHandlers Handlers = {resumeTrap, nullptr, nullptr};

} // namespace

void installDeoptHandlers() { deopt::setDeoptHandlers(&Handlers); }

Slot deoptimizableEntry(VMThread *T, Method *M, Slot *Args) {
  return deopt::callDeoptimizable(M->Tier1Code.load(std::memory_order_acquire),
                                  T, M, Args);
}

} // namespace jitlock::java
