//===- Inliner.h - Tier 1's inlining of small callees -----------*- C++ -*-===//
//
// Tier 1 inlines a call whose target it knows exactly (invokestatic, an
// invokespecial of a private method or a constructor) when the callee has at
// most --tier1-inline-size bytes of bytecode, up to --tier1-inline-depth
// calls deep, never recursively. The Translator translates such a callee
// into an "inline body": an internal function of the compiled method's
// module that returns its result together with whether it threw, and that
// has no stack check (it runs in its caller's frame) and no return poll.
// inlineBodies then inlines them and simplifySlots simplifies the function
// before the O2 pipeline, so that jitlock-elide sees one SSA value for an
// object the caller and an inlined synchronized callee both lock: the callee's
// monitor enter is a nested re-entry, or the region next to the caller's (or
// the next inlined callee's), which it coarsens. docs/java.md, "Inlining".
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_INLINER_H
#define JITLOCK_JAVA_INLINER_H

#include <string>

namespace llvm {
class Function;
} // namespace llvm

namespace jitlock::java {

/// The function attribute of an inline body.
inline constexpr const char *InlineBodyAttr = "jitlock-java-inline-body";

/// Inlines every call of an inline body into `F` (the bodies' own calls of
/// deeper bodies included) and deletes the bodies. Each call of a body
/// carries its caller's virtual frame in a "deopt" bundle, which LLVM's
/// inliner prepends to the bundles of the traps it inlines. False (with
/// `Why`) when a call could not be inlined.
bool inlineBodies(llvm::Function &F, std::string &Why);

/// Puts the number of virtual frames first in the "deopt" bundle of each
/// trap of `F` (the translator and the inliner leave it out, since a
/// trap's depth in the inline chain is known only once inlined). False
/// when a bundle is not a sequence of frames and a reason.
bool numberVirtualFrames(llvm::Function &F);

/// Makes `F`'s slots SSA values before the O2 pipeline, whose jitlock
/// passes come first: an inlined `this` is the caller's object again, an
/// inlined return's "threw" flag a constant on its path, a null check the
/// caller already made of the same object folded away, and one inttoptr
/// names each object.
void simplifySlots(llvm::Function &F);

} // namespace jitlock::java

#endif
