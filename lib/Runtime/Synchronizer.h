//===- Synchronizer.h - The locking protocol --------------------*- C++ -*-===//
#ifndef JITLOCK_RUNTIME_SYNCHRONIZER_H
#define JITLOCK_RUNTIME_SYNCHRONIZER_H

#include "Config.h"
#include "Monitor.h"
#include "MonitorStorage.h"
#include "ObjectHeader.h"
#include "Thread.h"

#include <atomic>
#include <cstdint>

namespace jitlock {

/// Argument checks shared by every C entry point that operates on an object
/// for `Self`: `Self` must be the calling, attached thread.
inline int checkCaller(jitlock_thread *Self, void *Obj, const char *What,
                       Caller From = Caller::Api) {
  if (!Self || Self != currentThread())
    return misuse(JITLOCK_ENOT_ATTACHED, Self, Obj, What, From);
  if (!Obj)
    return misuse(JITLOCK_ENULL, Self, Obj, What, From);
  return JITLOCK_OK;
}

// Complete operations; the C ABI checks its arguments and calls these.
// (Enter and exit are jitlock_rt_monitor_enter/exit, in Synchronizer.cpp.)
int wait(jitlock_thread &T, void *Obj, bool Timed, uint64_t TimeoutNs);
int notify(jitlock_thread &T, void *Obj, bool All);
/// Sets `T`'s interrupt flag and wakes `T` if it waits (I1-I2). `T` stays
/// attached during the call: it is the caller, or the caller holds the
/// thread registry (withAttachedThread).
void interrupt(jitlock_thread &T);
/// `T` may be null, or a thread that no handshake covers (native).
uint64_t identityHash(jitlock_thread *T, void *Obj);
/// The installed hash, or 0; from any thread.
uint64_t peekHash(const void *Obj);

/// The monitor that `Obj`'s header `H` (tag 10) names, from any thread.
/// Table storage: while an inflater or a deflater is between the header and
/// the entry, waits for the entry as long as the header still reads `H`;
/// null once it reads otherwise (the caller reloads it).
Monitor *monitorNamedBy(const void *Obj, uint64_t H);

/// A read of the monitor `M` that `Obj`'s header `H` named, by a thread that
/// no handshake covers (one not attached, or native): M may be deflated and
/// reused for another object under it (A6's readers in Synchronizer.cpp).
class MonitorRead {
public:
  MonitorRead(const void *Obj, uint64_t H)
      : Obj(Obj), H(H), M(monitorNamedBy(Obj, H)),
        Gen(M ? M->generationAcquire() : 1) {}

  /// Whether the header's monitor was found (table storage misses it when
  /// the header changed while the entry was missing: look again).
  bool found() const { return M; }
  Monitor &monitor() const { return *M; }

  /// Whether the fields read of M since construction were those of `Obj`'s
  /// monitor: the header still names M and M was not reused meanwhile. A
  /// reuse bumps the generation (odd) before it writes M's fields, so a
  /// field read of the next object's is followed by a generation read that
  /// shows it. With table storage the header does not name M alone (every
  /// monitor of the object gives the same header), so M must also still be
  /// the object's and undeflated.
  bool validate() const {
    if (!M)
      return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (storage::isTable() && (M->object() != Obj || M->contentions() < 0))
      return false;
    std::atomic_thread_fence(std::memory_order_acquire);
    return Gen % 2 == 0 && headerOf(Obj).load(std::memory_order_acquire) == H &&
           M->generationRaw() == Gen;
  }

private:
  const void *Obj;
  uint64_t H;
  Monitor *M;
  uint64_t Gen;
};

/// Where identityHash calls IdentityHashTestHook: once it has loaded a
/// header naming a monitor, and once it has read that monitor's displaced
/// header.
enum class IdentityHashStage { MonitorLoaded, DisplacedLoaded };
using IdentityHashHook = void (*)(IdentityHashStage Stage, void *Obj);
/// For tests only, which set it to force a deflation and reuse of the
/// monitor in the middle of a hash (the runtime never sets it). Null: one
/// relaxed load per hash of an inflated object, and nothing else.
extern std::atomic<IdentityHashHook> IdentityHashTestHook;

// Building blocks shared with restore-locks, queries and thread exit.

/// The object's header once the embedder's 11 state has passed.
uint64_t loadStableHeader(const void *Obj);

/// What an inflation did.
enum class Inflated {
  Installed,    ///< the header names the new monitor
  Raced,        ///< the header changed first; nothing was installed
  OutOfMonitors ///< index storage's region is full (JITLOCK_ENOMEM)
};

/// monitorOfHeader's wait: reloads `H` until the table has the entry.
Monitor *awaitMonitorOfHeader(const void *Obj, uint64_t &H);

/// The monitor that `Obj`'s header `H` (tag 10) names, for an attached
/// caller; reloads `H` until the table has the entry (table storage). Null
/// when `H` names no monitor, or stops naming one meanwhile. Inline: the
/// runtime's enter and exit of an inflated object look it up every time.
inline Monitor *monitorOfHeader(const void *Obj, uint64_t &H) {
  if (!header::hasMonitor(H))
    return nullptr;
  if (Monitor *M = storage::monitorFor(Obj, H))
    return M;
  return awaitMonitorOfHeader(Obj, H);
}

/// Inflates an object that `T` holds fast-locked, or fixes the anonymous
/// owner of one a contender inflated. All of the object's lock stack entries
/// move into the monitor's count; with no entries (restore-locks acquired the
/// header for `T` without pushing) the monitor holds it once. Null, with
/// nothing changed, when no monitor is left (index storage).
Monitor *inflateOwned(jitlock_thread &T, void *Obj);

/// The monitor through which `T` owns `Obj`, fixing an anonymous owner that
/// is `T`; null when `T` does not own `Obj` through a monitor. Inline for
/// the runtime's exit of an inflated object.
inline Monitor *monitorOwnedBy(jitlock_thread &T, void *Obj, uint64_t H) {
  Monitor *M = monitorOfHeader(Obj, H);
  if (!M)
    return nullptr;
  uintptr_t Holder = M->ownerAcquire();
  if (Holder == owner::encode(&T))
    return M;
  if (Holder == owner::AnonymousOwner && LockStack(T).contains(Obj))
    return inflateOwned(T, Obj);
  return nullptr;
}

/// Takes `M` for `T` if nobody holds it, even while others are queued
/// (barging; a queued head that keeps losing gets direct handoff instead).
bool takeFreeMonitor(jitlock_thread &T, Monitor &M);

/// Releases a fast lock `T` holds without a lock stack entry (restore-locks
/// acquired the header for `T` and is undoing that), whatever a contender
/// or the embedder did to the header meanwhile.
void unlockUnlisted(jitlock_thread &T, void *Obj);

/// takeFreeMonitor for `M` found through `Obj`'s header: gives `M` back and
/// returns false if the header no longer names it (deflated and reused).
bool takeInstalledMonitor(jitlock_thread &T, Monitor &M, void *Obj);

/// Takes `Obj`'s monitor `M` for `T`, spinning and then parking as needed,
/// or cancelling a deflation of `M` in progress (A4). Returns false, holding
/// nothing more, when a deflation of `M` has won (`Obj`'s header is then
/// restored) or `M` is no longer `Obj`'s: the caller starts over from the
/// header. True when `T` owns `M`, whose object is `Obj` at its current
/// address: a collector may have moved it while `T` slept (MC1).
bool enterMonitor(jitlock_thread &T, Monitor &M, void *Obj);

/// H1: installs a new monitor `M` owned by `T` on an object whose header is
/// the unlocked `Header`.
Inflated inflateUnlocked(jitlock_thread &T, void *Obj, uint64_t Header,
                         Monitor *&M);

/// Acquires `Obj`, which `T` does not hold, through a monitor: entering the
/// installed one, or inflating (H1, or anonymously when fast-locked).
Monitor *enterInflated(jitlock_thread &T, void *Obj);

/// A contender's inflation of an object another thread holds fast-locked:
/// installs a monitor with an anonymous owner.
Inflated inflateAnonymous(jitlock_thread &T, void *Obj, uint64_t Header);

/// Gives up one of `Owner`'s holds; the last one releases the monitor or
/// hands it to the entry queue's head.
void exitMonitor(Monitor &M, jitlock_thread &Owner);

/// XQ for inline code: `T` released `Obj`'s monitor (N3) and then found
/// threads queued on it.
void exitQueued(jitlock_thread &T, void *Obj);

/// XQ: wakes the entry queue's head to compete for `M`, or hands `M` to a
/// head that lost too often, unless `M` is owned or nobody is queued. For an
/// exit that found threads queued after its release, a joiner that found
/// `M` free (J3), and a deflation that aborted (an exit's XQ may have found
/// its marker and left the queue to it).
void wakeSuccessor(Monitor &M);

/// Releases every lock `T` holds (an OS thread exiting while attached).
/// Returns how many lock stack entries and monitors it released.
unsigned releaseAllLocks(jitlock_thread &T);

/// Whether `T` holds any lock, fast or inflated.
bool holdsAnyLock(jitlock_thread &T);

/// For a thread that detaches, holding no lock: returns once no spinner can
/// still be reading its state, which it read while the thread owned a
/// monitor (the thread's storage goes away when it exits).
void waitForOwnerPeeks();

// Shared by the synchronizer's files: Synchronizer.cpp (enter, exit, the
// entry queue), Inflation.cpp, Spin.cpp, WaitNotify.cpp, IdentityHash.cpp and
// ThreadLocks.cpp.

/// The next identity hash, from `T`'s generator or, with no thread, the
/// global one; never 0.
uint64_t nextHash(jitlock_thread *T);

/// takeFreeMonitor, or, finding a deflater's marker, cancel its deflation
/// (A4); only while `T` is counted in `M.Contentions`.
bool takeOrCancelDeflation(jitlock_thread &T, Monitor &M);

/// Waits for `M` without parking while that can pay ("Parking and
/// fairness"): true once `T` owns `M`, false when `T` should park. `T` is
/// counted in `M.Contentions`.
bool spinToEnter(jitlock_thread &T, Monitor &M);

/// Spins, then queues, until `T` owns `M`, in which `T` is counted (A4), and
/// takes the count back.
void enterCounted(jitlock_thread &T, Monitor &M);

/// Sleeps in `M`'s entry queue, where `T.Node` already is, until `T` owns
/// `M`.
void waitInEntryQueue(jitlock_thread &T, Monitor &M);

/// Publishes that `T` sleeps on `M`, or no longer does, for the deadlock
/// finder.
void markBlocked(jitlock_thread &T, Monitor *M);
void markUnblocked(jitlock_thread &T);

/// Releases a monitor whose last hold its owner gives up (N3, then XQ).
void releaseMonitor(Monitor &M);

/// The misuse of an inflation that found the index region full.
int outOfMonitors(jitlock_thread &T, void *Obj, Caller From);

/// The runtime's monitor exit of `Obj` for `T` (X1-X4, N1-N3), without the
/// C entry point's argument checks.
int exitObject(jitlock_thread &T, void *Obj);

// Deflation (Deflation.cpp).

/// A5: gives `Obj` its header back from `M`, whose deflation has won (A3),
/// unless that was done already. For the deflater, and for an enterer that
/// found M deflated through `Obj`'s header.
void restoreHeader(Monitor &M, void *Obj);

/// For tests only, as IdentityHashTestHook: called by a thread joining a
/// monitor's entry queue (J1) once it found the monitor owned, under the
/// queue lock and before it counts itself, so that a test can run the
/// owner's exit in that gap; and by a queued thread that an exit woke to
/// compete, before it tries, so that a test can let a barging thread in.
enum class JoinStage { FoundOwned, Woken };
using JoinHook = void (*)(JoinStage Stage, Monitor &M);
extern std::atomic<JoinHook> JoinTestHook;

/// Where a deflater calls DeflationTestHook, under the registry lock: once
/// A1's check of the entry count passed, before its CAS; once it has marked
/// `M`'s owner (A1); once its deflation has won (A3), just before the header
/// is restored (A5); and inside A5, between the seal and the header's
/// restore (where an enterer that helps with A5 calls it too).
enum class DeflationStage { Checked, OwnerMarked, Decided, Sealed };
using DeflationHook = void (*)(DeflationStage Stage, Monitor &M);
/// For tests only, as IdentityHashTestHook: they run enterers in between.
extern std::atomic<DeflationHook> DeflationTestHook;

/// Whether the deflation thread runs.
bool deflationThreadRunning();
/// Stops the deflation thread: JITLOCK_ESTATE when it is not running, or
/// when the caller holds a safepoint or runs a handshake operation (the
/// thread may be waiting for that).
int stopDeflationThread();

} // namespace jitlock

#endif
