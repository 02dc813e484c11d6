//===- Safepoint.h - Thread states, safepoints and handshakes ---*- C++ -*-===//
//
// The runtime side of jitlock_rt_safepoint_begin/end and the handshakes; the
// protocol is stated at the top of Safepoint.cpp. What other runtime files
// need: the poll word's bits, the blocked transitions around parking, a lock
// that a mutator waits for while safe, and a scope that runs an operation
// inside a safepoint.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_SAFEPOINT_H
#define JITLOCK_RUNTIME_SAFEPOINT_H

#include "Thread.h"

#include <atomic>
#include <cstdint>
#include <mutex>

namespace jitlock {

namespace poll {
/// Set whenever any reason below is: what inline polls test.
inline constexpr uint64_t ArmedBit = 1;
/// A safepoint is in progress.
inline constexpr uint64_t SafepointBit = 2;
/// A handshake operation is pending for this thread.
inline constexpr uint64_t HandshakeBit = 4;
} // namespace poll

/// Puts the calling thread `T` in the blocked (safe) state and returns the
/// state to give back to leaveBlocked.
uint32_t enterBlocked(jitlock_thread &T);
/// Returns `T` to `Prev` (managed or runtime), first stopping at a safepoint
/// in progress and running a handshake pending for `T`.
void leaveBlocked(jitlock_thread &T, uint32_t Prev);

/// Puts the calling thread `T` back in `State` after its frames were
/// abandoned in whatever state they were in: T1 into an unsafe state, T2
/// into a safe one.
void restoreThreadState(jitlock_thread &T, uint32_t State);

/// parkWhile (Parker.h), with the calling thread `T` blocked while it sleeps.
bool parkBlocked(jitlock_thread &T, std::atomic<uint32_t> &Word, uint32_t Value,
                 uint64_t DeadlineNs);

/// Locks `M`. An attached caller that has to wait waits blocked, so that a
/// safepoint or a handshake that holds `M` is not waiting for it in turn.
void lockWhileSafe(std::mutex &M);
/// lockWhileSafe for the thread registry lock, whose holders run only
/// queries: the check for a pending handshake that lockWhileSafe makes at
/// once is made by pollAfterRegistry, after the registry lock is released.
void lockRegistryWhileSafe(std::mutex &Registry);
void pollAfterRegistry();

/// Whether the calling OS thread holds a safepoint (and with it the thread
/// registry).
bool holdsSafepoint();
/// Whether the calling OS thread requests a handshake or runs a handshake
/// operation: it may start no other VM operation then.
bool inHandshake();

/// A handshake with `Target` (K1-K5) for the runtime's own operations;
/// false, with `Fn` not run, when `Target` is not attached. The caller must
/// not be inside a handshake (inHandshake) unless it holds a safepoint.
bool handshakeWith(jitlock_thread *Target, jitlock_handshake_fn Fn, void *Arg);

/// What VM operations the calling thread is inside, for a guarded call to
/// put back after a stack overflow abandoned frames.
struct OperationMarks {
  bool HeldSafepoint;
  unsigned Busy;
  unsigned Scopes;
};
OperationMarks operationMarks();
/// After a stack overflow abandoned frames back to where `Entry` was taken:
/// releases a safepoint they took, and aborts with a message if they were
/// running a handshake operation, which nobody could complete.
void unwindOperations(const OperationMarks &Entry);
/// Releases a safepoint the calling thread still holds as it exits.
void releaseSafepointAtExit();

/// Serializes VM operations (safepoints and handshakes) with detach: held by
/// a safepoint or a handshake throughout, and by a detaching thread while it
/// leaves, so that no thread leaves while an operation may address it.
std::mutex &operationLock();

/// Runs the enclosing scope inside a safepoint: the caller's own when it
/// holds one, else one taken for the scope. An attached caller counts as
/// native meanwhile, since it is the one running the operation.
class SafepointScope {
public:
  SafepointScope();
  ~SafepointScope();
  SafepointScope(const SafepointScope &) = delete;
  SafepointScope &operator=(const SafepointScope &) = delete;

  /// True when the calling thread runs a handshake operation and so cannot
  /// take a safepoint: the caller must not proceed.
  bool refused() const { return Refused; }

private:
  bool Took = false;
  bool Refused = false;
  jitlock_thread *Caller = nullptr;
  uint32_t CallerState = 0;
};

/// Fresh safepoint fields for a thread being attached (registry lock held).
void resetSafepointState(jitlock_thread &T);

} // namespace jitlock

#endif
