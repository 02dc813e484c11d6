//===- StorageLayout.h - Layouts for each monitor storage -------*- C++ -*-===//
//
// The emitters read the monitor storage and its fields from the layout they
// are given, so their code for a storage can be examined whether or not the
// runtime in the process implements it.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_UNITTESTS_EMITTERS_STORAGELAYOUT_H
#define JITLOCK_UNITTESTS_EMITTERS_STORAGELAYOUT_H

#include "jitlock/MonitorStorage.h"
#include "jitlock/jitlock_rt.h"

#include <cstring>
#include <optional>

namespace jitlock_test {

/// `L` for monitor storage `S`. A storage whose fields `L` leaves 0 (a
/// runtime that does not implement it) gets values of our own: the index
/// one of 192-byte monitors in the thread's slot at 640, the table a cache
/// of 8 entries at 704 with 3 probes.
inline jitlock_rt_layout withStorage(jitlock_rt_layout L,
                                     jitlock::MonitorStorage S) {
  L.monitor_storage = uint32_t(S);
  if (!L.monitor_stride) {
    L.monitor_index_shift = 2;
    L.monitor_stride = 192;
    L.monitor_base_offset = 640;
  }
  if (!L.monitor_cache_entries) {
    L.monitor_cache_offset = 704;
    L.monitor_cache_entries = 8;
    L.monitor_cache_probes = 3;
  }
  return L;
}

/// "pointer", "index" or "table" as a storage.
inline std::optional<jitlock::MonitorStorage> storageNamed(const char *Name) {
  if (!std::strcmp(Name, "pointer"))
    return jitlock::MonitorStorage::Pointer;
  if (!std::strcmp(Name, "index"))
    return jitlock::MonitorStorage::Index;
  if (!std::strcmp(Name, "table"))
    return jitlock::MonitorStorage::Table;
  return std::nullopt;
}

} // namespace jitlock_test

#endif
