//===- SlowPath.h - What both targets' slow-call emitters check -*- C++ -*-===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_SLOWPATH_H
#define JITLOCK_LIB_EMITTERS_COMMON_SLOWPATH_H

#include "jitlock/Emitters/Common.h"

namespace jitlock::emit {

/// Whether a caller-placed slow call (SlowPathMode::Labels) may be emitted
/// for `Labels`: both labels belong to `Code`, and the sequence has not bound
/// Slow already (it is bound by the slow call, once).
inline bool slowCallLabelsUsable(const asmjit::CodeHolder &Code,
                                 const SlowPathLabels &Labels) {
  return Code.isLabelValid(Labels.Slow) && Code.isLabelValid(Labels.Done) &&
         !Code.isLabelBound(Labels.Slow);
}

/// The label a caller-placed stub for `Call` binds (Slow, or Queued for
/// ExitQueued), and the entry point it calls; null for a SlowCall that is
/// none of the three.
inline const asmjit::Label *stubLabel(const SlowPathLabels &Labels,
                                      SlowCall Call) {
  switch (Call) {
  case SlowCall::Enter:
  case SlowCall::Exit:
    return &Labels.Slow;
  case SlowCall::ExitQueued:
    return &Labels.Queued;
  }
  return nullptr;
}
inline const void *stubEntry(const RuntimeEntries &RT, SlowCall Call) {
  switch (Call) {
  case SlowCall::Enter:
    return RT.Enter;
  case SlowCall::Exit:
    return RT.Exit;
  case SlowCall::ExitQueued:
    return RT.ExitQueued;
  }
  return nullptr;
}

/// Whether a stub for `Call` may be emitted: a known call with an entry
/// point, its label and Done belonging to `Code`, its label not bound yet.
inline bool stubUsable(const asmjit::CodeHolder &Code,
                       const SlowPathLabels &Labels, SlowCall Call,
                       const RuntimeEntries &RT) {
  const asmjit::Label *Bound = stubLabel(Labels, Call);
  return Bound && stubEntry(RT, Call) && Code.isLabelValid(*Bound) &&
         !Code.isLabelBound(*Bound) && Code.isLabelValid(Labels.Done);
}

/// The stubs emitSlowCall(A, Enter, ...) emits: the enter's one, or the
/// exit's Exit and, when the exit created Labels.Queued, its ExitQueued.
/// Returns how many it wrote to `Calls`.
inline unsigned sequenceStubs(const SlowPathLabels &Labels, bool Enter,
                              SlowCall (&Calls)[2]) {
  if (Enter) {
    Calls[0] = SlowCall::Enter;
    return 1;
  }
  Calls[0] = SlowCall::Exit;
  Calls[1] = SlowCall::ExitQueued;
  return Labels.Queued.isValid() ? 2 : 1;
}

/// The Slow and Done labels of one sequence, and for an exit (`Queued`
/// given) the label of its RT.ExitQueued call. In Labels mode they are the
/// caller's, each created when the caller left it invalid; the mode is
/// refused, before anything is created, without labels or with a Done (or
/// Queued) label already bound. Out of line they are fresh. Any other mode
/// is refused.
inline asmjit::Error sequenceLabels(asmjit::BaseEmitter &A, SlowPathMode Mode,
                                    SlowPathLabels *Labels, asmjit::Label &Slow,
                                    asmjit::Label &Done,
                                    asmjit::Label *Queued = nullptr) {
  if (Mode == SlowPathMode::Labels) {
    if (!Labels)
      return asmjit::kErrorInvalidArgument;
    asmjit::CodeHolder &Code = *A.code();
    auto IsBound = [&](const asmjit::Label &L) {
      return Code.isLabelValid(L) && Code.isLabelBound(L);
    };
    if (IsBound(Labels->Done) || (Queued && IsBound(Labels->Queued)))
      return asmjit::kErrorInvalidArgument;
    if (!Code.isLabelValid(Labels->Slow))
      Labels->Slow = A.newLabel();
    if (!Code.isLabelValid(Labels->Done))
      Labels->Done = A.newLabel();
    if (Queued && !Code.isLabelValid(Labels->Queued))
      Labels->Queued = A.newLabel();
    Slow = Labels->Slow;
    Done = Labels->Done;
    if (Queued)
      *Queued = Labels->Queued;
  } else if (Mode == SlowPathMode::OutOfLine) {
    Slow = A.newLabel();
    Done = A.newLabel();
    if (Queued)
      *Queued = A.newLabel();
  } else {
    return asmjit::kErrorInvalidArgument;
  }
  return Slow.isValid() && Done.isValid() && (!Queued || Queued->isValid())
             ? asmjit::kErrorOk
             : asmjit::kErrorOutOfMemory;
}

} // namespace jitlock::emit

#endif
