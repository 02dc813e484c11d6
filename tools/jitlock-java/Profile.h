//===- Profile.h - Tier 0's branch and receiver profiles --------*- C++ -*-===//
//
// Tier 0 records, per bytecode, how often each conditional branch went
// either way and which receiver classes each invokevirtual/invokeinterface
// saw. Tier 1 reads them when it compiles: a branch side never taken becomes
// an uncommon trap (Deoptimize.h), and a call site that saw one receiver
// class inlines that class's method behind a check that traps. The counters are
// racy on purpose: a lost increment only makes a count a little low, and tier 1
// reads counts of at least --tier1-trap-min-count, so the interpreter pays a
// relaxed load and store rather than an atomic read-modify-write on every
// branch.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_JAVA_PROFILE_H
#define JITLOCK_JAVA_PROFILE_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace jitlock::java {

struct Class;
struct Method;

struct MethodProfile {
  explicit MethodProfile(size_t CodeLength);
  /// By bytecode offset; only the offsets of branches and invokes move.
  std::unique_ptr<std::atomic<uint32_t>[]> Taken, NotTaken;
  /// By bytecode offset: the first two receiver classes an invoke saw, how
  /// many calls had each, and how many calls had a receiver of neither.
  std::unique_ptr<std::atomic<Class *>[]> Receivers;       // 2 per offset
  std::unique_ptr<std::atomic<uint32_t>[]> ReceiverCounts; // 2 per offset
  std::unique_ptr<std::atomic<uint32_t>[]> Megamorphic;
  size_t Length;
};

/// M's profile, made at the first call that needs it.
MethodProfile &profileOf(Method *M);
/// M's profile if it has one, else null.
const MethodProfile *existingProfile(const Method *M);

inline void bump(std::atomic<uint32_t> &C) {
  uint32_t V = C.load(std::memory_order_relaxed);
  if (V != UINT32_MAX)
    C.store(V + 1, std::memory_order_relaxed);
}

/// Whether tier 0 profiles: only when tier 1 may compile (not -Xint).
extern bool Profiling;

/// Tier 0: a conditional branch at `Bci` went (`Taken`) or fell through.
inline void profileBranch(Method *M, size_t Bci, bool Taken) {
  if (!Profiling)
    return;
  MethodProfile &P = profileOf(M);
  bump(Taken ? P.Taken[Bci] : P.NotTaken[Bci]);
}
/// Tier 0: an invokevirtual/invokeinterface at `Bci` with receiver class K.
void profileReceiver(Method *M, size_t Bci, Class *K);

/// The side a conditional branch at `Bci` always went, when it ran at
/// least `MinCount` times: 1 taken, 0 fell through; -1 when both were
/// seen or it ran too rarely to tell.
int alwaysTakenSide(const Method *M, size_t Bci, uint32_t MinCount);

/// The one receiver class an invoke at `Bci` saw, when it saw it at least
/// `MinCount` times and no other; else null.
Class *monomorphicReceiver(const Method *M, size_t Bci, uint32_t MinCount);
/// Whether an invoke at `Bci` saw a receiver of a class other than K.
bool sawOtherReceiver(const Method *M, size_t Bci, const Class *K);

/// The profile as text, one line per branch or invoke that ran (-Xlog:jit
/// and --print-profile).
std::string describeProfile(const Method *M);

} // namespace jitlock::java

#endif
