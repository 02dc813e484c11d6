//===- Dependencies.h - Class-hierarchy dependencies of tier 1 --*- C++ -*-===//
//
// Tier 1 inlines a virtual call of a method that no instantiated class
// overrides, behind a check of the receiver's class (Inliner.h). The check
// keeps the code right whatever is instantiated later: a receiver of another
// class takes the virtual call, or traps (Deoptimize.h) unless the profile
// saw such a receiver there. What goes stale is the choice: once a class
// that overrides the method has its first instance, each compiled method
// that inlined it is invalidated, its Entry back to the interpreter and its
// counters reset, so that it is compiled again for the new hierarchy. Frames
// already running the old code finish in it, their class checks sending
// the new receivers to the virtual call or a trap (no frame needs
// deoptimizing eagerly).
//
// The lock here is a leaf: it is taken under the class and compile locks,
// and from allocation, and never held while taking another.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_DEPENDENCIES_H
#define JITLOCK_JAVA_DEPENDENCIES_H

namespace jitlock::java {

struct Class;
struct Method;

/// Whether no instantiated class below Impl's overrides it; if so, records
/// that `Compiled` (being compiled) depends on it staying so.
bool dependOnOneImplementation(const Method *Impl, Method *Compiled);

/// Called at the first instance of C (allocObject): invalidates the
/// compiled methods that depend on a method C overrides.
void noteInstantiated(Class *C);

/// Whether M was invalidated since it was last compiled (and clears that):
/// tier 1 then compiles it again.
bool takeInvalidated(const Method *M);

} // namespace jitlock::java

#endif
