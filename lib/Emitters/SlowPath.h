//===- SlowPath.h - What both targets' slow-call emitters check -*- C++ -*-===//
#ifndef JITLOCK_LIB_EMITTERS_SLOWPATH_H
#define JITLOCK_LIB_EMITTERS_SLOWPATH_H

#include "jitlock/Emitters.h"

namespace jitlock::emit {

/// Whether a caller-placed slow call (SlowPathMode::Labels) may be emitted
/// for `Labels`: both labels belong to `Code`, and the sequence has not bound
/// Slow already (it is bound by the slow call, once).
inline bool slowCallLabelsUsable(const asmjit::CodeHolder &Code,
                                 const SlowPathLabels &Labels) {
  return Code.isLabelValid(Labels.Slow) && Code.isLabelValid(Labels.Done) &&
         !Code.isLabelBound(Labels.Slow);
}

/// The Slow and Done labels of one sequence. In Labels mode they are the
/// caller's, each created when the caller left it invalid; the mode is
/// refused, before anything is created, without labels or with a Done label
/// already bound. Out of line they are fresh. Any other mode is refused.
inline asmjit::Error sequenceLabels(asmjit::BaseEmitter &A, SlowPathMode Mode,
                                    SlowPathLabels *Labels, asmjit::Label &Slow,
                                    asmjit::Label &Done) {
  if (Mode == SlowPathMode::Labels) {
    if (!Labels)
      return asmjit::kErrorInvalidArgument;
    asmjit::CodeHolder &Code = *A.code();
    if (Code.isLabelValid(Labels->Done) && Code.isLabelBound(Labels->Done))
      return asmjit::kErrorInvalidArgument;
    if (!Code.isLabelValid(Labels->Slow))
      Labels->Slow = A.newLabel();
    if (!Code.isLabelValid(Labels->Done))
      Labels->Done = A.newLabel();
    Slow = Labels->Slow;
    Done = Labels->Done;
  } else if (Mode == SlowPathMode::OutOfLine) {
    Slow = A.newLabel();
    Done = A.newLabel();
  } else {
    return asmjit::kErrorInvalidArgument;
  }
  return Slow.isValid() && Done.isValid() ? asmjit::kErrorOk
                                          : asmjit::kErrorOutOfMemory;
}

} // namespace jitlock::emit

#endif
