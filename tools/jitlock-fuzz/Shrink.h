//===- Shrink.h - Reducing a failing program --------------------*- C++ -*-===//
//
// Delta debugging on the AST: fewer threads, fewer repeats, then, over and
// over until nothing more goes, whole functions dropped, statements
// dropped or replaced by their bodies, loops run once, recursion bounds
// lowered, unused objects and counters dropped. A candidate is kept when it
// is valid (validate()) and still fails the same way.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_TOOLS_FUZZ_SHRINK_H
#define JITLOCK_TOOLS_FUZZ_SHRINK_H

#include "Program.h"

#include <functional>

namespace jitlock::fuzz {

struct Shrunk {
  Program P;
  unsigned Threads = 1;
  unsigned Trials = 0;   ///< candidates run
  unsigned Accepted = 0; ///< candidates that still failed
};

/// Whether `P` run on `Threads` threads still fails as the original did.
using StillFails = std::function<bool(const Program &P, unsigned Threads)>;

Shrunk shrink(const Program &P, unsigned Threads, const StillFails &Fails,
              unsigned MaxTrials);

} // namespace jitlock::fuzz

#endif
