//===- Tier1.h - Tier 1: bytecode to LLVM IR, compiled by ORC ---*- C++ -*-===//
//
// Tier 0 counts each method's invocations and backward branches; a method
// whose count reaches its threshold is compiled (Tier1.cpp) on the thread
// that made it hot, and its Entry (VM.h) is swapped for the compiled code.
// docs/java.md, "Tier 1", says how the tiers meet.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_TIER1_H
#define JITLOCK_JAVA_TIER1_H

#include <cstdint>
#include <string>

namespace jitlock::java {

struct Method;
struct VMThread;

struct Tier1Options {
  /// A method is compiled when its invocations, or its backward branches,
  /// reach these counts; 0 never. -Xcomp is invocations 1.
  uint32_t InvocationThreshold = 0;
  uint32_t BackEdgeThreshold = 0;
  /// -Xlog:jit: each compilation, its time, and each refusal with its
  /// reason, on stderr.
  bool Log = false;
  /// "ir" or "asm": print each compiled method's optimized IR or machine
  /// code on stderr (debugging, and the lit tests); "remarks": the jitlock
  /// passes' remarks (elided, coarsened, kept); "" prints nothing.
  std::string Print;
  /// Only methods whose qualified name contains this are printed.
  std::string PrintFilter;
  /// Callees with at most this many bytes of bytecode are inlined (0:
  /// none), up to InlineDepth calls deep (Inliner.h).
  uint32_t InlineSize = 35;
  uint32_t InlineDepth = 4;
  /// A callee that is hot itself (tier 0 counted at least the invocation
  /// threshold of calls, and at least HotCalleeCalls) is inlined with up to
  /// this many bytes (0: no more than InlineSize).
  uint32_t HotInlineSize = 325;
  uint32_t HotCalleeCalls = 100;
  /// How many times a method may be inlined into its own inline chain: a
  /// recursive call is inlined this many levels deep (0: never).
  uint32_t RecursiveInlineLevel = 1;
  /// Methods whose qualified name contains this have their tier-0 profile
  /// printed when compiled; "" prints none.
  std::string PrintProfile;
  /// --elide=false: the lowering keeps every lock (LoweringConfig::Elide).
  bool Elide = true;
};

/// The thresholds tier 0 compares its counts with (0: never).
extern uint32_t Tier1InvocationThreshold, Tier1BackEdgeThreshold;

/// Sets the options and the native target up; the JIT itself is created at
/// the first compilation. False with a message when the host has no target.
bool initTier1(const Tier1Options &Opts, std::string &Error);

/// Tier 0 calls this when one of M's counters reaches its threshold:
/// compiles M (once; a method tier 1 cannot compile stays in tier 0) and
/// installs the code in M->Entry.
void compileHotMethod(VMThread *T, Method *M);

} // namespace jitlock::java

#endif
