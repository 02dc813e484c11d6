//===- jitlock/Emitters.h - asmjit monitor fast paths -----------*- C++ -*-===//
//
// The umbrella header of the asmjit front door: the contract both targets
// share (jitlock/Emitters/Common.h) and the declarations of every target
// this jitlock was built with (jitlock/Emitters/Targets.h, generated from
// lib/Emitters/Targets.def: jitlock/Emitters/X86.h, .../AArch64.h). Code for
// one target may include that target's header alone; it needs only that
// asmjit backend.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_EMITTERS_H
#define JITLOCK_EMITTERS_H

#include "jitlock/Emitters/Common.h"
#include "jitlock/Emitters/Targets.h"

#endif // JITLOCK_EMITTERS_H
