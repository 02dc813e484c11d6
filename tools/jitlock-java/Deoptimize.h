//===- Deoptimize.h - Uncommon traps and resuming in tier 0 -----*- C++ -*-===//
//
// Tier 1 compiles a branch side that tier 0's profile never saw taken, and
// the failure of an inlined call's class check, as an uncommon trap: a call
// of llvm.experimental.deoptimize whose "deopt" bundle describes the
// virtual frames of the physical frame, one per method of the inline chain
// (docs/java.md, "Speculation and deoptimization", gives the encoding). jitlock
// appends the frame's monitors; libjitlock_deopt decodes the record and
// restores the locks; resumeTrap (Deoptimize.cpp) rebuilds one tier-0 frame per
// virtual frame and runs them, innermost first, and counts the trap against the
// method, which is recompiled without that speculation or, after
// --tier1-max-traps, stays in tier 0.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_DEOPTIMIZE_H
#define JITLOCK_JAVA_DEOPTIMIZE_H

#include "VM.h"

#include <cstdint>

namespace jitlock::java {

/// Why a trap fired: the last operand of the bundle.
enum class TrapReason : uint32_t {
  UnstableIf = 0, ///< a branch side the profile never saw taken
  ClassCheck = 1, ///< a receiver class the profile never saw
  Unloaded = 2,   ///< a class hierarchy assumption no longer holds
  /// The code was invalidated (Dependencies.h) while this frame ran it: a
  /// lazy deoptimization after a call or a poll, not the code's fault.
  Dependency = 3,
};
const char *trapReasonName(uint32_t Reason);

/// The deopt options (main.cpp sets them).
struct DeoptOptions {
  /// -Xlog:deopt: each trap with its lock state, on stderr.
  bool Log = false;
  /// --speculate: tier 1 compiles never-taken branch sides as traps.
  bool Speculate = true;
  /// A branch is speculated on only after this many executions in tier 0.
  uint32_t TrapMinCount = 100;
  /// After this many traps a method stays in tier 0.
  uint32_t MaxTraps = 4;
};
extern DeoptOptions DeoptOpts;

/// One tier-0 frame to continue: method M at bytecode Bci with these
/// locals and operand stack, holding its monitors already (SyncObj is a
/// synchronized method's, or null). With Callee set, Bci is an invoke that
/// completes with Result (or T->Pending) from Callee's frame.
struct ResumeState {
  Method *M = nullptr;
  size_t Bci = 0;
  const Slot *Locals = nullptr;
  unsigned NumLocals = 0;
  const Slot *Stack = nullptr;
  unsigned NumStack = 0;
  Object *SyncObj = nullptr;
  const Method *Callee = nullptr;
  Slot Result = 0;
};

/// Interpreter.cpp: runs the frame from R to its return.
Slot resumeInterpreted(VMThread *T, const ResumeState &R);

/// Installs the deopt handlers (once, before the first compilation).
void installDeoptHandlers();

/// The entry of a method whose tier-1 code may trap: calls it through
/// jitlock::deopt::callDeoptimizable, so that a trap returns here.
Slot deoptimizableEntry(VMThread *T, Method *M, Slot *Args);

/// Tier1.cpp: sends M's calls back to tier 0; with Recompile, tier 1
/// compiles it again (with the profile it has then) when it is hot again.
void invalidateTier1(Method *M, bool Recompile);

} // namespace jitlock::java

#endif
