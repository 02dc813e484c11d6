//===- Config.h - Runtime-wide configuration --------------------*- C++ -*-===//
//
// The configuration every operation reads. It is written only while no thread
// is attached (jitlock_rt_configure), so readers need no synchronization
// beyond the registry lock that attach takes.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_CONFIG_H
#define JITLOCK_RUNTIME_CONFIG_H

#include "jitlock/jitlock_rt.h"

namespace jitlock {

extern jitlock_rt_config Config;

/// Reports a misuse through the embedder's handler, if any, and returns the
/// status so that call sites read `return misuse(...)`.
int misuse(jitlock_status Status, jitlock_thread *Thread, void *Obj,
           const char *What);

} // namespace jitlock

#endif
