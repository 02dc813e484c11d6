//===- Spin.cpp - Spinning before parking ---------------------------------===//
//
// How a contended enter waits for a monitor without parking: the adaptive
// spin (AdaptiveSpin.h), the probes' back-off, the owner's activity and
// yielding to an owner that needs a CPU, as "Parking and fairness" in the
// protocol comment at the top of Synchronizer.cpp states them. A probe
// takes the monitor or cancels a deflation (A4); the caller is counted in
// the monitor's contentions throughout.
//
//===----------------------------------------------------------------------===//
#include "Synchronizer.h"

#include "Parker.h"
#include "Safepoint.h"

#include <sched.h>
#include <unistd.h>

namespace jitlock {

//===----------------------------------------------------------------------===//
// Spinning before parking
//===----------------------------------------------------------------------===//

namespace {
/// A counter on a cache line of its own: every contended enter of every
/// monitor touches it.
struct alignas(CacheLine) SharedCount {
  std::atomic<uint32_t> N{0};
};
/// Threads spinning for a monitor now (spinProbes).
SharedCount Spinners;
/// Threads reading another thread's state now (ownerActivity).
SharedCount OwnerPeeks;
} // namespace

/// How many threads may spin at once: one fewer than the CPUs this process
/// may run on, counted once, so that spinners never take the CPU the owner
/// needs to finish. None on a single CPU, where a spinner's whole slice is
/// one the owner cannot use.
static uint32_t maxSpinners() {
  static const uint32_t Max = [] {
    cpu_set_t Set;
    long CPUs = sched_getaffinity(0, sizeof(Set), &Set) == 0
                    ? CPU_COUNT(&Set)
                    : sysconf(_SC_NPROCESSORS_ONLN);
    return CPUs > 1 ? uint32_t(CPUs - 1) : 0u;
  }();
  return Max;
}

/// What the owner of a monitor is doing, as far as a contender can tell.
enum class OwnerActivity {
  /// On a CPU, or waiting for one: it may release soon.
  Running,
  /// Handed the monitor by an exit and not back on a CPU yet: it needs a
  /// CPU, then it runs its critical section.
  Waking,
  /// Parked in the runtime for something else, or in native code: it is not
  /// coming back soon.
  Stopped
};

/// What the owner that `M`'s owner word names is doing. An anonymous owner
/// holds the object fast-locked, in compiled code, which runs unless it
/// called out; finding it would mean scanning every lock stack, so it
/// counts as running and the spin budget's adaptation takes care of the
/// rest. A free monitor, or a deflater's marker: the next probe takes it or
/// cancels the deflation.
///
/// The owner's jitlock_thread lives in its thread's TLS, which goes away
/// with the thread. It is read only while `M` still names it, inside an
/// OwnerPeeks count that a thread leaving the runtime waits out
/// (waitForOwnerPeeks); a thread that leaves owns no monitor.
static OwnerActivity ownerActivity(Monitor &M) {
  jitlock_thread *Owner = owner::threadOf(M.ownerRaw());
  if (!Owner)
    return OwnerActivity::Running;
  // Seq_cst with the leaving thread's fence: either it sees this peek and
  // waits, or this load sees its release of M.
  OwnerPeeks.N.fetch_add(1, std::memory_order_seq_cst);
  uint32_t State = JITLOCK_THREAD_MANAGED, Wake = QueueNode::Sleep;
  if (owner::threadOf(M.ownerForPeek()) == Owner) {
    // Acquire: it reads one of the owner's own State stores (attach makes
    // the first, before the owner can take M), which orders this read after
    // the owner's thread set up its storage.
    State = Owner->State.load(std::memory_order_acquire);
    Wake = Owner->Node.Wakeup.load(std::memory_order_relaxed);
  }
  OwnerPeeks.N.fetch_sub(1, std::memory_order_release);
  if (State == JITLOCK_THREAD_NATIVE)
    return OwnerActivity::Stopped;
  if (State == JITLOCK_THREAD_BLOCKED)
    return Wake == QueueNode::Granted ? OwnerActivity::Waking
                                      : OwnerActivity::Stopped;
  return OwnerActivity::Running;
}

void waitForOwnerPeeks() {
  // The caller released its last monitor before: a peek that starts after
  // this fence finds another owner, one that started before is waited out.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (unsigned Round = 0; OwnerPeeks.N.load(std::memory_order_acquire);
       ++Round) {
    if (Round < 64)
      spinPause();
    else
      sched_yield();
  }
}

/// Whether a safepoint or a handshake wants `T`: it should park, which is
/// safe and lets them proceed, rather than spin.
static bool pollArmed(jitlock_thread &T) {
  return T.PollWord.load(std::memory_order_relaxed) & poll::ArmedBit;
}

/// How a spin for a monitor ended.
enum class SpinEnd {
  Taken,     ///< `T` owns the monitor.
  Exhausted, ///< The budget ran out: park.
  Crowded,   ///< No CPU to spare for spinning: yield to the owner.
  Waking,    ///< The owner was handed the monitor and needs a CPU: yield.
  Stopped    ///< The owner stopped running, or a safepoint wants `T`: park.
};

/// The longest a spinner waits between two probes, in pauses (about 13 µs
/// on a core where a pause takes 25 ns).
static constexpr uint32_t MaxPausesBetweenProbes = 512;

/// Pauses `N` times, unless a safepoint or a handshake wants `T` meanwhile
/// (checked once a round): false then.
static bool pauseUnlessWanted(jitlock_thread &T, uint64_t N) {
  for (uint64_t I = 1; I <= N; ++I) {
    spinPause();
    if (I % spin::PausesPerRound == 0 && pollArmed(T))
      return false;
  }
  return true;
}

/// Spins for `M` up to `M`'s spin budget (AdaptiveSpin.h) and adapts the
/// budget to the outcome.
static SpinEnd spinProbes(jitlock_thread &T, Monitor &M, uint32_t Limit) {
  // As many spinners as CPUs would leave none for the owner.
  const uint32_t Max = maxSpinners();
  if (Spinners.N.load(std::memory_order_relaxed) >= Max)
    return SpinEnd::Crowded;
  if (Spinners.N.fetch_add(1, std::memory_order_relaxed) >= Max) {
    Spinners.N.fetch_sub(1, std::memory_order_relaxed);
    return SpinEnd::Crowded;
  }
  const uint32_t Stored = M.spinBudget();
  const uint32_t Rounds = spin::budget(Stored, Limit);
  // Probes back off exponentially, from 1 up to MaxPausesBetweenProbes
  // pauses apart, until the budget's pauses are spent: each probe pulls the
  // owner word's line away from the owner, who must fetch it back to
  // release, and an owner left alone runs many critical sections in a row
  // with its lines in its own cache.
  SpinEnd End = SpinEnd::Exhausted;
  uint64_t Left = uint64_t(Rounds) * spin::PausesPerRound;
  for (uint32_t Gap = 1; Left && End == SpinEnd::Exhausted;
       Gap = Gap < MaxPausesBetweenProbes ? 2 * Gap : Gap) {
    uint64_t Pauses = Gap < Left ? Gap : Left;
    Left -= Pauses;
    if (!pauseUnlessWanted(T, Pauses)) {
      End = SpinEnd::Stopped;
    } else if (takeOrCancelDeflation(T, M)) {
      End = SpinEnd::Taken;
    } else if (Gap >= spin::PausesPerRound) {
      // The owner's state, once the probes are far enough apart for the
      // check to cost little next to them.
      OwnerActivity Owner = ownerActivity(M);
      if (Owner == OwnerActivity::Stopped)
        End = SpinEnd::Stopped;
      else if (Owner == OwnerActivity::Waking)
        End = SpinEnd::Waking;
    }
  }
  Spinners.N.fetch_sub(1, std::memory_order_relaxed);
  // A spin cut short says nothing about how long owners hold M.
  if (End == SpinEnd::Taken || End == SpinEnd::Exhausted) {
    uint32_t Next = spin::adapt(Stored, End == SpinEnd::Taken, Limit);
    if (Next != Stored)
      M.setSpinBudget(Next);
  }
  return End;
}

/// How many times a contender yields its CPU to an owner that needs one
/// before it parks.
static constexpr uint32_t MaxYields = 4;

/// Yields the CPU while the owner needs one more than `T` does: true once
/// `T` owns `M`, false when it should park.
static bool yieldToOwner(jitlock_thread &T, Monitor &M) {
  for (uint32_t Y = 0; Y < MaxYields; ++Y) {
    sched_yield();
    if (takeOrCancelDeflation(T, M))
      return true;
    if (pollArmed(T) || ownerActivity(M) == OwnerActivity::Stopped)
      return false;
  }
  return false;
}

/// Waits for `M`, which `T` found taken, without parking, as long as that
/// can pay: spins while the owner runs and a CPU is to spare, yields while
/// the owner needs a CPU. True once `T` owns `M`; false when `T` should
/// park. `T` is counted in `M.Contentions`.
bool spinToEnter(jitlock_thread &T, Monitor &M) {
  const uint32_t Limit = Config.spin_limit;
  if (Limit == 0)
    return false;
  SpinEnd End;
  switch (ownerActivity(M)) {
  case OwnerActivity::Stopped:
    return false;
  case OwnerActivity::Waking:
    End = SpinEnd::Waking;
    break;
  case OwnerActivity::Running:
    End = spinProbes(T, M, Limit);
    break;
  }
  if (End == SpinEnd::Crowded || End == SpinEnd::Waking)
    return yieldToOwner(T, M);
  return End == SpinEnd::Taken;
}

} // namespace jitlock
