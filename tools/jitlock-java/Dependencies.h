//===- Dependencies.h - Class-hierarchy dependencies of tier 1 --*- C++ -*-===//
//
// Tier 1 inlines a virtual call of a method that no instantiated class
// overrides. In the compiled method's own code the inlined body runs for any
// receiver, with no check of its class: it is right only while no class that
// overrides the method has an instance. In an inline body (a callee inlined
// into it) the call keeps a check of the receiver's class (Inliner.h), whose
// failure takes the virtual call, or traps (Deoptimize.h) unless the profile
// saw such a receiver there.
//
// When a class that overrides such a method gets its first instance
// (noteInstantiated, before allocObject returns it), each compiled code that
// depends on the method is invalidated: its Entry goes back to the
// interpreter, its counters reset so that it is compiled again for the new
// hierarchy. A handshake with every thread then sets its
// CompiledCode::Invalidated word, so that each thread sees the mark before it
// can see the new object; the frames already running the code check the word
// after each point where other code may have run (a call, a poll, a
// contended enter) and deoptimize there, lazily (docs/deopt.md, "Lazy
// deoptimization").
//
// The lock here is a leaf: it is taken under the class and compile locks,
// and from allocation, and never held while taking another (the handshake
// runs after it is released).
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_DEPENDENCIES_H
#define JITLOCK_JAVA_DEPENDENCIES_H

#include <atomic>
#include <cstdint>
#include <functional>

namespace jitlock::java {

struct Class;
struct Method;

/// One compilation of a method: what its dependencies invalidate. It lives
/// as long as the VM, as the code does (the JIT never removes code), since
/// frames of the code read its word.
struct CompiledCode {
  explicit CompiledCode(Method *M) : M(M) {}
  Method *const M;
  /// Whether a dependency broke (under the dependencies' lock).
  bool Broken = false;
  /// The mark the code's invalidation checks load: set by the handshake
  /// that follows the break.
  std::atomic<uint32_t> Invalidated{0};
};

/// A record for a compilation of M that starts now.
CompiledCode *newCompiledCode(Method *M);

/// Whether no instantiated class below Impl's overrides it; if so, records
/// that `Code` (being compiled) depends on it staying so.
bool dependOnOneImplementation(const Method *Impl, CompiledCode *Code);

/// Runs `Install` (which publishes the code) unless the code was invalidated
/// while it compiled; atomically with respect to noteInstantiated, so that
/// an invalidation never misses code installed after it. False if not run.
bool installUnlessInvalidated(CompiledCode *Code,
                              const std::function<void()> &Install);

/// Called at the first instance of C (allocObject), before the instance is
/// returned: invalidates the compiled code that depends on a method C
/// overrides, and handshakes with every thread so that each sees that
/// before it can see the instance.
void noteInstantiated(Class *C);

/// Whether M was invalidated since it was last compiled (and clears that):
/// tier 1 then compiles it again.
bool takeInvalidated(const Method *M);

} // namespace jitlock::java

#endif
