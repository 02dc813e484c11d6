//===- MonitorStorage.h - How an inflated header names its monitor -*- C++ -*-//
//
// The one interface between an inflated header (tag 10) and its monitor,
// for the three strategies of jitlock_monitor_storage. Each encoding is
// stated once, at jitlock_rt_layout's monitor_storage (jitlock_rt.h); the
// rules of the transitions are in the protocol comment's "Storage"
// paragraph (Synchronizer.cpp). MonitorIndexShift (ObjectHeader.h) and
// sizeof(Monitor) are the layout's monitor_index_shift and monitor_stride.
//
// Table protocol. The header and the table entry change in this order:
// inflation CASes the header to 10 and then inserts the entry (publish);
// deflation's A5 removes the entry and then restores the header, both
// under the table lock (unpublish), and only if the entry still names the
// monitor being deflated. So an entry names m only while the header is 10
// for m's era; the header is 10 without an entry only briefly, while an
// inflater or a deflater is between its two steps, and a lookup that misses
// then starts over from the header. Inserts, removes and growth take the
// table lock; lookups by threads that handshakes cover (attached, in
// `managed` or `runtime`) take no lock. Growth rehashes into a new array
// and retires the old one, which is freed only after a handshake with
// every thread (the next deflation cycle's A6) or inside a safepoint;
// lookups by threads that no handshake covers take the table lock.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_MONITORSTORAGE_H
#define JITLOCK_RUNTIME_MONITORSTORAGE_H

#include "jitlock/MonitorStorage.h"

#include "Config.h"
#include "ObjectHeader.h"
#include "Thread.h"

#include <cstddef>
#include <cstdint>

namespace jitlock {

class Monitor;

namespace storage {

/// The storage in use: jitlock_rt_configure admits only the values of
/// jitlock/MonitorStorage.def.
inline MonitorStorage current() {
  return MonitorStorage(Config.monitor_storage);
}

inline bool isIndex() {
  return Config.monitor_storage == JITLOCK_MONITORS_INDEX;
}
inline bool isTable() {
  return Config.monitor_storage == JITLOCK_MONITORS_TABLE;
}

/// The default, smallest and largest index-storage capacity (monitors).
inline constexpr uint32_t DefaultCapacity = 1u << 20;
inline constexpr uint32_t MaxCapacity = 1u << 24;

/// The header that names `M` on an object whose header, unlocked or
/// fast-locked, is `H` (for table storage, with its hash installed).
uint64_t encode(uint64_t H, const Monitor *M);

/// The monitor that `Obj`'s header `H` (tag 10) names, for the calling
/// thread. Pointer and index decode it. Table looks it up: from a thread
/// that handshakes cover without a lock, filling its cache; from any other
/// under the table lock. Null (table only) when the entry is not there yet
/// or any more: the caller reloads the header and starts over.
Monitor *monitorFor(const void *Obj, uint64_t H);

/// After the CAS that made `Obj`'s header name `M` (table: insert the entry).
void publish(void *Obj, Monitor *M);

/// A5's header part: makes `Obj`'s header unlocked again, `Unlocked` for
/// pointer and index (the sealed displaced header with bits 01), the
/// header's own bits with 01 for table, if the header (and for table the
/// entry) still names `M`. Waits out the embedder's 11.
void unpublish(Monitor &M, void *Obj, uint64_t Unlocked);

/// Whether `Obj`'s header names `M` now, for a thread that may hold `M`'s
/// address from an earlier load.
bool names(const void *Obj, const Monitor &M);

/// Empties `T`'s monitor cache: at attach and detach, in the A6 handshake,
/// and in a safepoint that moved objects.
void dropCache(jitlock_thread &T);

/// Makes the storage of `Cfg` the one in use. Called by configure with no
/// thread attached and no monitor in memory unless the storage stays the
/// same. JITLOCK_ENOMEM when the index region cannot be reserved.
int configure(const jitlock_rt_config &Cfg);

/// What attach writes into the thread's MonitorBase: the index region's
/// monitor 0, or 0.
uintptr_t regionBase();

/// Index storage: up to `Count` never-used, consecutive monitor slots of
/// the region, committed, not constructed; `Count` becomes how many. Null
/// (and 0) when the region is full. Registry lock held.
void *carveFromRegion(uint32_t &Count);
/// Index storage: whether `M` lives in the region (not on the heap).
bool inRegion(const Monitor *M);
/// Index storage at shutdown, every monitor destroyed: decommits the region
/// and starts carving from index 1 again.
void resetRegion();

/// Table storage: the retired arrays a deflation cycle may free once its
/// handshake (or its safepoint) covers every thread, taken before the
/// handshake; and freeing them afterwards.
void *takeRetiredArrays();
void freeRetiredArrays(void *Arrays);
/// Table storage, inside a safepoint after a moving collector updated
/// monitor objects (jitlock_rt_enumerate_roots): entries follow their
/// monitors' objects and every cache is dropped.
void followMovedObjects();
/// Table storage at shutdown, headers restored: empties the table.
void clearTable();

/// Table storage figures, for the monitor statistics.
struct TableFigures {
  uint64_t Capacity = 0, Live = 0, Tombstones = 0, Rehashes = 0,
           LongestProbe = 0, Lookups = 0;
};
TableFigures tableFigures();

} // namespace storage
} // namespace jitlock

#endif
