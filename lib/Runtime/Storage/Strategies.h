//===- Storage/Strategies.h - The halves of the dispatch ----*- C++ -*-===//
//
// One namespace per line of jitlock/MonitorStorage.def, each implemented
// whole by the file of its name in this directory. MonitorStorage.cpp
// dispatches to them on the configured storage; the encodings are stated
// at jitlock_rt_layout's monitor_storage (jitlock_rt.h), the table's
// protocol in MonitorStorage.h. A fourth storage adds a
// namespace here, a file beside these and a case to each switch of
// MonitorStorage.cpp (-Wswitch names the switches it misses).
//
// The storage-specific entry points of MonitorStorage.h that only one
// storage has (the index region, the table's arrays and caches) are
// defined in that storage's file too.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_STORAGE_STRATEGIES_H
#define JITLOCK_RUNTIME_STORAGE_STRATEGIES_H

#include "../MonitorStorage.h"

namespace jitlock {
namespace storage {

namespace pointer {
/// The header of tag 10 that names `M`.
uint64_t encode(const Monitor *M);
/// The monitor a header of tag 10 names.
Monitor *monitorFor(uint64_t H);
} // namespace pointer

namespace index {
uint64_t encode(const Monitor *M);
Monitor *monitorFor(uint64_t H);
/// Reserves the region for `Cfg`'s capacity, or unmaps it when `Cfg`'s
/// storage is not index.
int configure(const jitlock_rt_config &Cfg);
} // namespace index

namespace table {
/// `H` (hash installed) with tag 10.
uint64_t encode(uint64_t H);
/// MonitorStorage.h's monitorFor: the cache, then the table.
Monitor *monitorFor(const void *Obj, uint64_t H);
/// Inserts the entry `Obj` -> `M`.
void publish(void *Obj, Monitor *M);
/// Removes the entry if it names `M`, then restores the header's tag 01.
void unpublish(Monitor &M, void *Obj);
} // namespace table

} // namespace storage
} // namespace jitlock

#endif
