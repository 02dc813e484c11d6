//===- Deflation.cpp - Deflating idle monitors while mutators run ---------===//
//
// A deflation cycle gives every idle monitor's object back its unlocked
// header and, after a handshake with every thread, frees the monitor for
// reuse. The steps are A1-A6 of the protocol comment in Synchronizer.cpp;
// the enterer's side (A4, and A5 when it helps) is in Synchronizer.cpp.
//
// A cycle is a VM operation in two parts. The sweep (A1-A5 for each
// registered monitor) holds the operation lock, so that no safepoint or
// handshake runs meanwhile: inside a safepoint a collector may move objects
// and monitor roots, and expects headers to stay put. Then, with the lock
// released, a handshake with every thread (A6) makes sure no thread still
// holds the address of a deflated monitor from an earlier header load, and
// the monitors go on the free list. A cycle run by the holder of a safepoint
// frees them at once: every other thread is stopped at a poll or safe.
//
// Cycles outside a safepoint run one at a time (the cycle lock), so that
// an inflation that finds the index region full waits for the cycle in
// flight to free what it swept instead of finding nothing to sweep, and no
// stream of empty cycles keeps a cycle's handshake from the operation lock.
// A thread waits for the cycle lock as it waits for the operation lock,
// blocked: the cycle in flight may be waiting for a handshake with it. The
// holder of a safepoint never waits for it (the cycle in flight may wait
// for the safepoint): its cycle also frees what the cycle in flight swept,
// which every other thread being stopped or safe makes safe to reuse.
//
// The deflation thread (jitlock_rt_start_deflation) is not attached: it runs
// cycles when the live monitors pass its policy's threshold, counted beyond
// those the previous sweep found busy, and on its period. An inflation that
// reaches the threshold wakes it (DeflationTrigger).
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include "Config.h"
#include "Monitor.h"
#include "MonitorStorage.h"
#include "ObjectHeader.h"
#include "Parker.h"
#include "Safepoint.h"
#include "Synchronizer.h"

#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <sched.h>
#include <thread>

using namespace jitlock;

namespace {
/// jitlock_deflation_stats, summed over every deflater.
std::atomic<uint64_t> MonitorsDeflated{0}, Cycles{0}, ThreadCycles{0},
    Handshakes{0}, Cancelled{0};

/// The limits jitlock_rt_start_deflation checks.
constexpr uint32_t MaxPeriodMs = 3600 * 1000;
constexpr jitlock_deflation_policy DefaultPolicy = {
    /*struct_size=*/sizeof(jitlock_deflation_policy),
    /*period_ms=*/1000,
    /*idle_threshold=*/1024};
} // namespace

//===----------------------------------------------------------------------===//
// One monitor: A1-A3, then A5
//===----------------------------------------------------------------------===//

static void runDeflationHook(DeflationStage Stage, Monitor &M);

namespace jitlock {

void restoreHeader(Monitor &M, void *Obj) {
  // A5. Seal: a hash install that read the unsealed word fails its CAS and
  // starts over from the object's header, where the hash then goes.
  uint64_t D = M.displacedHeaderAcquire();
#ifndef JITLOCK_MUTATE_A5_SEAL // scripts/mutate.sh
  while (header::isUnlocked(D) &&
         !M.trySealDisplacedHeader(
             D, header::withLockBits(D, header::LockedValue))) {
  }
#endif
  runDeflationHook(DeflationStage::Sealed, M);
  // Sealed, the word never changes again: every helper writes the same.
  storage::unpublish(M, Obj, header::withLockBits(D, header::UnlockedValue));
}

} // namespace jitlock

std::atomic<DeflationHook> jitlock::DeflationTestHook{nullptr};
std::atomic<void (*)()> jitlock::CycleSweptTestHook{nullptr};

static void runDeflationHook(DeflationStage Stage, Monitor &M) {
  if (DeflationHook Hook = DeflationTestHook.load(std::memory_order_relaxed))
    Hook(Stage, M);
}

/// The deflater gives up on `M` after A1: the owner word goes back to 0,
/// unless an enterer cancelled the deflation by taking it (A4), in which
/// case the deflater takes back the contention that enterer added for it.
static void abortDeflation(Monitor &M) {
  if (!M.tryUnmarkDeflating()) {
    // Release, against the enterer's acq_rel A4 count: the take-back cannot
    // come before that count ("Abort:" in Synchronizer.cpp).
    M.removeContention();
    Cancelled.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // An exit between A1 and here found DEFLATER in its XQ and left the
  // queue to us. The fence pairs with J2, as an exit's barrier does.
  std::atomic_thread_fence(std::memory_order_seq_cst);
#ifndef JITLOCK_MUTATE_ABORT_XQ // scripts/mutate.sh
  if (M.entryCount() != 0)
    wakeSuccessor(M);
#endif
}

/// A1-A3 and A5 for one monitor, under the registry lock. True when `M`'s
/// object no longer names it, so that the sweep unregisters it (A6).
static bool deflateIfIdle(Monitor &M) {
  // A1: only a monitor nobody owns or fixes. One that threads are queued
  // on is not idle, whoever owns it: left alone without a CAS.
  if (M.entryCount() != 0)
    return false;
  runDeflationHook(DeflationStage::Checked, M);
  if (!M.tryMarkDeflating())
    return false;
  runDeflationHook(DeflationStage::OwnerMarked, M);
  // A2: nobody counted, queued or waiting. No queue lock is needed: only an
  // owner joins the wait set, before it releases M, which A1 acquired; and
  // nobody joins the entry queue uncounted while the owner is the marker.
  if (M.entryCount() || M.waitCount() || M.recursions() != 0 ||
      M.contentions() != 0) {
    abortDeflation(M);
    return false;
  }
  // A3: the decision. From here no enterer can take M.
  if (!M.tryDecideDeflation()) {
    abortDeflation(M);
    return false;
  }
  runDeflationHook(DeflationStage::Decided, M);
  restoreHeader(M, M.object());
  return true;
}

//===----------------------------------------------------------------------===//
// A cycle: the sweep, the handshake, the free list
//===----------------------------------------------------------------------===//

static void handshakeForDeflation(void *, jitlock_thread *T) {
  // Reaching a poll, or being safe, is the point (A6). The thread's monitor
  // cache may name a deflated monitor: it goes before the monitor is reused.
  storage::dropCache(*T);
}

/// Serializes the deflation cycles that run outside a safepoint.
static std::mutex CycleMutex;

/// A deflation cycle by the holder of a safepoint. `Busy` gets how many
/// monitors the sweep left: they were busy.
static size_t runCycleInSafepoint(uint64_t &Busy) {
  DeflatedChain Deflated;
  size_t N = sweepMonitors(deflateIfIdle, Deflated, Busy);
  Cycles.fetch_add(1, std::memory_order_relaxed);
  // The cycle in flight, if any, is stopped or waits for the operation lock
  // (for its handshake): what it swept is freed here too.
  if (N == 0 && !monitorsInFlight())
    return 0;
  // Table arrays retired so far: no thread reads them after this.
  void *Retired = storage::takeRetiredArrays();
  // A6: every other thread is stopped or safe already.
  forEachThread([](jitlock_thread &T) { storage::dropCache(T); });
  storage::freeRetiredArrays(Retired);
  freeMonitors(Deflated);
  freeMonitorsInFlight();
  MonitorsDeflated.fetch_add(N, std::memory_order_relaxed);
  return N;
}

/// A deflation cycle outside a safepoint; CycleMutex held.
static size_t runCycleLocked(uint64_t &Busy) {
  lockWhileSafe(operationLock());
  size_t N = sweepMonitorsInFlight(deflateIfIdle, Busy);
  operationLock().unlock();
  Cycles.fetch_add(1, std::memory_order_relaxed);
  if (N == 0)
    return 0;
  if (void (*Hook)() = CycleSweptTestHook.load(std::memory_order_relaxed))
    Hook();
  // Table arrays retired so far: no thread reads them after the handshake.
  void *Retired = storage::takeRetiredArrays();
  // A6.
#ifndef JITLOCK_MUTATE_A6 // scripts/mutate.sh
  jitlock_rt_handshake_all(handshakeForDeflation, nullptr);
#endif
  Handshakes.fetch_add(1, std::memory_order_relaxed);
  storage::freeRetiredArrays(Retired);
  // Unless a safepoint's cycle freed them meanwhile.
  freeMonitorsInFlight();
  MonitorsDeflated.fetch_add(N, std::memory_order_relaxed);
  return N;
}

/// One deflation cycle; the caller is no handshake operation.
static size_t runCycle(uint64_t &Busy) {
  if (holdsSafepoint())
    return runCycleInSafepoint(Busy);
  lockWhileSafe(CycleMutex);
  size_t N = runCycleLocked(Busy);
  CycleMutex.unlock();
  return N;
}

bool jitlock::deflateForSpace(uint64_t EpochSeen) {
  if (inHandshake())
    return false;
  uint64_t Busy;
  if (holdsSafepoint()) {
    runCycleInSafepoint(Busy);
  } else {
    lockWhileSafe(CycleMutex);
    // A cycle that ended while this thread waited for its turn has freed
    // what it swept: try that first.
    if (freeEpoch() == EpochSeen)
      runCycleLocked(Busy);
    CycleMutex.unlock();
  }
  return freeEpoch() != EpochSeen;
}

size_t jitlock_rt_deflate_idle(void) {
  if (inHandshake()) {
    misuse(JITLOCK_ESTATE, nullptr, nullptr,
           "deflation from inside a handshake");
    return 0;
  }
  uint64_t Busy;
  return runCycle(Busy);
}

//===----------------------------------------------------------------------===//
// The deflation thread
//===----------------------------------------------------------------------===//

namespace {
/// Guards the thread's lifetime (start, stop).
std::mutex ControlMutex;
/// On the heap, so that no static std::thread is destroyed while joinable at
/// exit (which would terminate the process); stopAtExit ends it first.
std::thread *DeflationThread = nullptr;
bool ExitHandlerInstalled = false;
std::atomic<bool> StopRequested{false};
/// 1 once the thread's loop has returned: a futex word to wait on.
std::atomic<uint32_t> LoopEnded{0};
/// Bumped, then woken, to end the thread's sleep early: by stop, and by the
/// inflation that reaches DeflationTrigger.
std::atomic<uint32_t> WakeWord{0};
std::atomic<bool> Running{false};

void wakeDeflationThread() {
  WakeWord.fetch_add(1, std::memory_order_release);
  wakeAll(WakeWord);
}

void deflationLoop(jitlock_deflation_policy P) {
  pthread_setname_np(pthread_self(), "jitlock-deflate");
  const uint64_t PeriodNs = uint64_t(P.period_ms) * 1000000u;
  // Monitors the previous cycle's sweep found busy; those created since
  // may be idle. Before the first cycle, every monitor may be idle.
  uint64_t Busy = 0;
  while (!StopRequested.load(std::memory_order_acquire)) {
    uint32_t Seen = WakeWord.load(std::memory_order_acquire);
    if (P.idle_threshold) {
      uint64_t Trigger = Busy + P.idle_threshold;
      DeflationTrigger.store(Trigger);
      // An inflation that got there first compared with the old trigger.
      if (monitorsAlive() >= Trigger)
        requestDeflation();
    }
    uint64_t Deadline = PeriodNs ? monotonicNowNs() + PeriodNs : 0;
    // Until the period ends, an inflation reaches the trigger (and bumps
    // WakeWord), or stop.
    while (!StopRequested.load(std::memory_order_acquire) &&
           WakeWord.load(std::memory_order_acquire) == Seen)
      if (!parkWhile(WakeWord, Seen, Deadline))
        break;
    DeflationTrigger.store(UINT64_MAX);
    if (StopRequested.load(std::memory_order_acquire))
      break;
    runCycle(Busy);
    ThreadCycles.fetch_add(1, std::memory_order_relaxed);
  }
  LoopEnded.store(1, std::memory_order_release);
  wakeAll(LoopEnded);
}

/// Ends the thread; ControlMutex held. An attached caller is blocked while
/// it waits: the thread may be waiting for a handshake with it. With a
/// deadline (0: none), a thread still running then is left behind,
/// detached, and false is returned.
bool endThreadLocked(uint64_t DeadlineNs, bool AtExit) {
  StopRequested.store(true, std::memory_order_release);
  wakeDeflationThread();
  jitlock_thread *Self = currentThread();
  uint32_t Prev = Self ? enterBlocked(*Self) : 0;
  while (!LoopEnded.load(std::memory_order_acquire))
    if (!parkWhile(LoopEnded, 0, DeadlineNs))
      break;
  bool Ended = LoopEnded.load(std::memory_order_acquire);
  if (Ended)
    DeflationThread->join();
  else
    DeflationThread->detach();
  delete DeflationThread;
  DeflationThread = nullptr;
  // At exit the caller stays blocked: it runs no managed code any more.
  if (Self && !AtExit)
    leaveBlocked(*Self, Prev);
  if (Ended) {
    StopRequested.store(false, std::memory_order_relaxed);
    LoopEnded.store(0, std::memory_order_relaxed);
  }
  DeflationTrigger.store(UINT64_MAX, std::memory_order_relaxed);
  Running.store(false, std::memory_order_release);
  return Ended;
}

/// A thread left running when the process exits is stopped before the
/// statics it uses are destroyed; one that does not stop within a second
/// (waiting for a handshake with a thread that never polls) is left behind.
void stopAtExit() {
  std::lock_guard<std::mutex> Guard(ControlMutex);
  if (DeflationThread)
    endThreadLocked(monotonicNowNs() + 1000000000u, /*AtExit=*/true);
}
} // namespace

namespace jitlock {

void requestDeflation() {
  // The first inflation to see the trigger reached disarms it and wakes the
  // thread; later ones see UINT64_MAX and stay quiet.
  if (DeflationTrigger.exchange(UINT64_MAX, std::memory_order_relaxed) !=
      UINT64_MAX)
    wakeDeflationThread();
}

bool deflationThreadRunning() {
  return Running.load(std::memory_order_acquire);
}

int stopDeflationThread() {
  if (holdsSafepoint() || inHandshake())
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "stopping the deflation thread while holding a safepoint or "
                  "inside a handshake (it may be waiting for either)");
  std::unique_lock<std::mutex> Guard(ControlMutex);
  if (!DeflationThread) {
    Guard.unlock(); // A stack overflow in the handler would leave it held.
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "stopping the deflation thread, which is not running");
  }
  endThreadLocked(/*DeadlineNs=*/0, /*AtExit=*/false);
  return JITLOCK_OK;
}

} // namespace jitlock

int jitlock_rt_fill_default_deflation_policy(jitlock_deflation_policy *P) {
  return fillCallerStruct("jitlock_deflation_policy", P,
                          sizeof(jitlock_deflation_policy), &DefaultPolicy,
                          sizeof(DefaultPolicy));
}

int jitlock_rt_start_deflation(const jitlock_deflation_policy *Requested) {
  jitlock_deflation_policy P = DefaultPolicy;
  if (Requested) {
    if (int Err = checkStructSize(
            "jitlock_deflation_policy", Requested->struct_size,
            sizeof(jitlock_deflation_policy), sizeof(jitlock_deflation_policy)))
      return Err;
    P.period_ms = Requested->period_ms;
    P.idle_threshold = Requested->idle_threshold;
  }
  if (P.period_ms > MaxPeriodMs || (P.period_ms == 0 && P.idle_threshold == 0))
    return misuse(JITLOCK_EINVAL, nullptr, nullptr,
                  "invalid deflation policy: the period must be at most an "
                  "hour, and the period and the idle threshold cannot both "
                  "be 0");
  if (inHandshake())
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "starting the deflation thread from inside a handshake");
  std::unique_lock<std::mutex> Guard(ControlMutex);
  if (DeflationThread) {
    Guard.unlock(); // A stack overflow in the handler would leave it held.
    return misuse(JITLOCK_ESTATE, nullptr, nullptr,
                  "starting the deflation thread, which is running already");
  }
  if (!ExitHandlerInstalled)
    ExitHandlerInstalled = std::atexit(stopAtExit) == 0;
  Running.store(true, std::memory_order_release);
  DeflationThread = new std::thread(deflationLoop, P);
  return JITLOCK_OK;
}

int jitlock_rt_stop_deflation(void) { return stopDeflationThread(); }

void jitlock_rt_get_deflation_stats(jitlock_deflation_stats *Out) {
  if (!Out)
    return;
  auto Get = [](const std::atomic<uint64_t> &C) {
    return C.load(std::memory_order_relaxed);
  };
  *Out = jitlock_deflation_stats{
      Get(MonitorsDeflated), Get(Cycles),    Get(ThreadCycles),
      Get(Handshakes),       Get(Cancelled), deflationThreadRunning(),
      monitorsAllocated()};
}
