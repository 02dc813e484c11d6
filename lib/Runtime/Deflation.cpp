//===- Deflation.cpp - Deflating idle monitors ----------------------------===//
//
// jitlock_rt_deflate_idle gives every idle monitor's object back its unlocked
// header and frees the monitor for reuse, following D1-D4 of the protocol
// comment in Synchronizer.cpp, inside a safepoint: no other thread runs
// monitor code meanwhile, and none holds a monitor address from an earlier
// header load when a freed monitor is reused (inline code never polls
// between its header load and its CAS, and parked threads sit in the queues
// of the monitors they hold addresses of, which D2 leaves alone). The steps
// are still the ones a concurrent deflater would take, so that enterers
// racing them retry cleanly.
//
//===----------------------------------------------------------------------===//
#include "jitlock/jitlock_rt.h"

#include "Config.h"
#include "Monitor.h"
#include "ObjectHeader.h"
#include "Safepoint.h"

#include <sched.h>

using namespace jitlock;

/// D1-D3 for one monitor, under the registry lock. True when `M`'s object no
/// longer names it and `M` may be freed (D4, by the caller).
static bool deflateIfIdle(Monitor &M) {
  // D1: only a monitor nobody owns, fixes or queues on.
  uintptr_t Free = 0;
  if (!M.Owner.compare_exchange_strong(Free, owner::DeflaterMarker,
                                       std::memory_order_acquire,
                                       std::memory_order_relaxed))
    return false;
  // D2: waiters keep their monitor; nobody can join a queue from here on.
  M.QueueLock.lock();
  bool Busy = M.EntryHead || M.WaitHead ||
              M.Recursions.load(std::memory_order_relaxed) != 0;
  M.QueueLock.unlock();
  if (Busy) {
    M.Owner.store(0, std::memory_order_release);
    return false;
  }
  // D3: seal the displaced header so that hash installs go to the object.
  uint64_t D = M.DisplacedHeader.load(std::memory_order_acquire);
  while (!M.DisplacedHeader.compare_exchange_weak(
      D, header::withLockBits(D, header::LockedValue),
      std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
  uint64_t Unlocked = header::withLockBits(D, header::UnlockedValue);
  // Release: the last owner's critical section, acquired by D1, happens
  // before the next fast lock of the object.
  auto Header = headerOf(M.Object);
  for (;;) {
    uint64_t Expected = header::encodeMonitor(&M);
    if (Header.compare_exchange_strong(Expected, Unlocked,
                                       std::memory_order_release,
                                       std::memory_order_relaxed))
      break;
    // The object no longer names M (it never should): M is unreachable.
    if (!header::isEmbedderOwned(Expected))
      break;
    sched_yield(); // The embedder's transient 11 state.
  }
  return true;
}

size_t jitlock_rt_deflate_idle(void) {
  SafepointScope Stopped;
  if (Stopped.refused()) {
    misuse(JITLOCK_ESTATE, nullptr, nullptr,
           "deflation from inside a handshake");
    return 0;
  }
  return sweepMonitors(deflateIfIdle);
}
