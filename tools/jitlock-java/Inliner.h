//===- Inliner.h - Tier 1's inlining of small callees -----------*- C++ -*-===//
//
// Tier 1 inlines a call whose target it knows exactly (invokestatic, an
// invokespecial of a private method or a constructor) when the callee has at
// most --tier1-inline-size bytes of bytecode, up to --tier1-inline-depth
// calls deep, never recursively. The Translator translates such a callee
// into an "inline body": an internal function of the compiled method's
// module that returns its result together with whether it threw, and that
// has no stack check (it runs in its caller's frame) and no return poll.
// inlineBodies then inlines them and simplifies the function before the O2
// pipeline, so that jitlock-elide sees one SSA value for an object the
// caller and an inlined synchronized callee both lock: the callee's monitor
// enter is a nested re-entry, or the region next to the caller's (or the
// next inlined callee's), which it coarsens. docs/java.md, "Inlining".
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_INLINER_H
#define JITLOCK_JAVA_INLINER_H

namespace llvm {
class Function;
} // namespace llvm

namespace jitlock::java {

/// The function attribute of an inline body.
inline constexpr const char *InlineBodyAttr = "jitlock-java-inline-body";

/// Inlines every call of an inline body into `F` (the bodies' own calls of
/// deeper bodies included), deletes the bodies, and makes `F`'s slots SSA
/// values with the results' "threw" flags folded. Returns how many calls
/// it inlined.
unsigned inlineBodies(llvm::Function &F);

} // namespace jitlock::java

#endif
