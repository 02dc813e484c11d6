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

} // namespace jitlock::emit

#endif
