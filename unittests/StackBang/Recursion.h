//===- Recursion.h - Deep recursions for the stack banging tests ---------===//
//
// Kept in their own file so that no caller inlines them, and built without
// tail calls, so that every level really is a frame.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_STACKBANG_RECURSION_H
#define JITLOCK_UNITTESTS_STACKBANG_RECURSION_H

#include "jitlock/jitlock_rt.h"

#include <cstddef>
#include <cstdint>

namespace stackbang_test {

/// A recursion whose every level starts with the check a lowered method
/// entry does: compare sp minus the frame with the watermark, and call the
/// bang slow path at or below it. Levels may take locks, which they keep
/// until the recursion unwinds normally (an overflow abandons them).
struct CheckedRecursion {
  jitlock_thread *Self = nullptr;
  /// The object to lock at this depth, or null.
  void *(*LockAt)(void *Ctx, unsigned Depth) = nullptr;
  void *Ctx = nullptr;
  /// The holds taken and not yet released, oldest first.
  void **Taken = nullptr;
  size_t TakenCap = 0;
  size_t NumTaken = 0;
  /// What each entry asks for below its frame address.
  uintptr_t FrameBytes = 512;
  unsigned MaxDepth = ~0u;
  unsigned Deepest = 0;
};

void checkedRecurse(CheckedRecursion &R, unsigned Depth);

/// Recurses `Max` levels without any check; each frame has a buffer. No
/// sanitizer instrumentation: its overflow faults in its own frames only.
unsigned nativeRecurse(unsigned Depth, unsigned Max);

/// An address just below the caller's frame: "the stack pointer".
uintptr_t frameAddress();

} // namespace stackbang_test

#endif
