//===- jitlock/StackBang.h - Method-entry stack check modes -----*- C++ -*-===//
//
// What a checked method entry does about the stack, shared by both front
// doors: the LLVM lowering ("jitlock-stack-bang" functions, Passes.h) and the
// asmjit emitters (emitStackBang, Emitters.h). docs/stack-banging.md shows
// the code each mode produces.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_STACKBANG_H
#define JITLOCK_STACKBANG_H

namespace jitlock {

/// What a checked method entry checks.
enum class BangMode {
  /// Compare the stack pointer (minus the extra frame bytes) with the
  /// thread's watermark; call jitlock_rt_stack_bang only at or below it.
  /// One load, one compare and one branch in the steady state.
  Watermark,
  /// Touch every shadow page below the stack pointer on every entry, with
  /// no watermark: the scheme the watermark replaces, kept as a baseline.
  /// A touch that lands in a guard zone is caught by the runtime's SIGSEGV
  /// backstop.
  Always,
  /// No check at all.
  None,
};

} // namespace jitlock

#endif // JITLOCK_STACKBANG_H
