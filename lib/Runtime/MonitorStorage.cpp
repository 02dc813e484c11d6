//===- MonitorStorage.cpp - The dispatch over the monitor storages --------===//
//
// Each entry point of MonitorStorage.h switches over the configured storage
// with a case per line of jitlock/MonitorStorage.def and no default, so
// that -Wswitch names every switch a new storage misses; the cases call
// Storage/<Name>.cpp. jitlock_rt_configure refuses an unknown value, so
// current() never sees one.
//
//===----------------------------------------------------------------------===//
#include "MonitorStorage.h"

#include "Monitor.h"
#include "Storage/Strategies.h"

#include <sched.h>

namespace jitlock {
namespace storage {

uint64_t encode(uint64_t H, const Monitor *M) {
  switch (current()) {
  case MonitorStorage::Pointer:
    return pointer::encode(M);
  case MonitorStorage::Index:
    return index::encode(M);
  case MonitorStorage::Table:
    return table::encode(H);
  }
  __builtin_unreachable();
}

Monitor *monitorFor(const void *Obj, uint64_t H) {
  switch (current()) {
  case MonitorStorage::Pointer:
    return pointer::monitorFor(H);
  case MonitorStorage::Index:
    return index::monitorFor(H);
  case MonitorStorage::Table:
    return table::monitorFor(Obj, H);
  }
  __builtin_unreachable();
}

void publish(void *Obj, Monitor *M) {
  switch (current()) {
  case MonitorStorage::Pointer:
  case MonitorStorage::Index:
    return; // The header's CAS published it.
  case MonitorStorage::Table:
    return table::publish(Obj, M);
  }
}

/// A5's header part for a storage whose header encodes the monitor: from
/// the header that names `M` back to `Unlocked`.
static void restoreEncodedHeader(Monitor &M, void *Obj, uint64_t Unlocked) {
  auto Header = headerOf(Obj);
  for (;;) {
    uint64_t Expected = encode(0, &M);
    // Release: the last owner's critical section, acquired by A1 (or by
    // a helper's A4 count), happens before the next fast lock.
    if (Header.compare_exchange_strong(Expected, Unlocked,
                                       std::memory_order_release,
                                       std::memory_order_relaxed))
      return;
    // Restored already, by the deflater or another helper.
    if (!header::isEmbedderOwned(Expected))
      return;
    sched_yield(); // The embedder's transient 11 state.
  }
}

void unpublish(Monitor &M, void *Obj, uint64_t Unlocked) {
  switch (current()) {
  case MonitorStorage::Pointer:
  case MonitorStorage::Index:
    return restoreEncodedHeader(M, Obj, Unlocked);
  case MonitorStorage::Table:
    return table::unpublish(M, Obj);
  }
}

bool names(const void *Obj, const Monitor &M) {
  uint64_t H = headerOf(Obj).load(std::memory_order_acquire);
  while (header::isEmbedderOwned(H)) {
    sched_yield();
    H = headerOf(Obj).load(std::memory_order_acquire);
  }
  if (!header::hasMonitor(H))
    return false;
  switch (current()) {
  case MonitorStorage::Pointer:
  case MonitorStorage::Index:
    return H == encode(H, &M);
  case MonitorStorage::Table:
    // The header first, then the entry (MonitorStorage.h): an entry for M
    // seen after a header of 10 means the header was M's then.
    return table::monitorFor(Obj, H) == &M;
  }
  __builtin_unreachable();
}

int configure(const jitlock_rt_config &Cfg) { return index::configure(Cfg); }

} // namespace storage
} // namespace jitlock
