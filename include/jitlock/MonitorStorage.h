//===- jitlock/MonitorStorage.h - How a header names its monitor -*- C++
//-*-===//
//
// The monitor storage strategies (jitlock_monitor_storage) as both front
// doors see them: the LLVM lowering (pass parameter monitors=..., Passes.h)
// and the asmjit emitters (the layout's monitor_storage, Emitters.h). What
// inline code does with each is in the comment of jitlock_rt_layout's
// monitor_storage; docs/fast-paths.md and docs/emitters.md show the code.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_MONITORSTORAGE_H
#define JITLOCK_MONITORSTORAGE_H

#include "jitlock/jitlock_rt.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace jitlock {

/// How an inflated header (tag 10) names its monitor, and so how the inline
/// monitor paths (M1, N2) find it. One enumerator per line of
/// MonitorStorage.def; the encodings are stated at jitlock_rt_layout's
/// monitor_storage (jitlock_rt.h).
enum class MonitorStorage {
#define JITLOCK_MONITOR_STORAGE(Enumerator, Name, CValue, Fields, Help)        \
  Enumerator = CValue,
#include "jitlock/MonitorStorage.def"
};

/// The groups of jitlock_rt_layout fields a storage's inline code reads.
enum MonitorStorageFields : unsigned {
  /// None: the header alone names the monitor.
  NoLayoutFields = 0,
  /// monitor_index_shift, monitor_stride and monitor_base_offset (the
  /// thread's slot holding the index region's base).
  IndexRegionFields = 1u << 0,
  /// monitor_cache_offset, monitor_cache_entries and monitor_cache_probes.
  MonitorCacheFields = 1u << 1,
};

/// What a front end needs to know of one storage.
struct MonitorStorageDescriptor {
  MonitorStorage Storage;
  /// Its name in configurations and on command lines.
  const char *Name;
  /// Its jitlock_monitor_storage value.
  uint32_t Value;
  /// MonitorStorageFields: the layout fields its inline code reads.
  unsigned LayoutFields;
  /// One line for --help.
  const char *Help;
};

/// Every storage, in the order of MonitorStorage.def.
inline constexpr MonitorStorageDescriptor MonitorStorages[] = {
#define JITLOCK_MONITOR_STORAGE(Enumerator, Name, CValue, Fields, Help)        \
  {MonitorStorage::Enumerator, Name, CValue, Fields, Help},
#include "jitlock/MonitorStorage.def"
};

/// The descriptor of `S`.
inline const MonitorStorageDescriptor &describe(MonitorStorage S) {
  for (const MonitorStorageDescriptor &D : MonitorStorages)
    if (D.Storage == S)
      return D;
  // Unreachable for a MonitorStorage made from MonitorStorage.def.
  return MonitorStorages[0];
}

/// The storage a layout's (or a configuration's) monitor_storage names;
/// nullopt for an unknown value.
inline std::optional<MonitorStorage> monitorStorageOf(uint32_t Storage) {
  for (const MonitorStorageDescriptor &D : MonitorStorages)
    if (D.Value == Storage)
      return D.Storage;
  return std::nullopt;
}

/// The storage called `Name`; nullopt for an unknown name.
inline std::optional<MonitorStorage>
monitorStorageNamed(std::string_view Name) {
  for (const MonitorStorageDescriptor &D : MonitorStorages)
    if (Name == D.Name)
      return D.Storage;
  return std::nullopt;
}

/// The most cache probes inline code unrolls: a layout asking for more is
/// refused rather than turned into a sequence of unbounded length.
inline constexpr uint32_t MaxMonitorCacheProbes = 16;

/// How the inline inflated exit (N3) orders its release store of the owner
/// word before its load of the entry count (jitlock_inflated_exit).
enum class InflatedExit {
  /// Nothing between them: the runtime pays at the rare side, a thread that
  /// is about to park, with a process-wide membarrier.
  Store = JITLOCK_EXIT_STORE,
  /// A full fence between them; correct on any runtime.
  Fence = JITLOCK_EXIT_FENCE,
};

/// The exit a layout's monitor_exit names; nullopt for an unknown one.
inline std::optional<InflatedExit> inflatedExitOf(uint32_t Exit) {
  switch (Exit) {
  case JITLOCK_EXIT_STORE:
    return InflatedExit::Store;
  case JITLOCK_EXIT_FENCE:
    return InflatedExit::Fence;
  }
  return std::nullopt;
}

/// Why inline code for storage `S` cannot be generated from `L`: the name
/// of the first layout field that storage needs and finds missing or out of
/// range, or nullptr when there is none. A runtime that does not implement
/// a storage leaves its fields 0. Index needs a shift that drops the lock
/// bits, a stride and the thread's base slot (offset 0 is the lock-stack
/// top, never the base); table needs the cache's offset and entries, and
/// 1..min(entries, MaxMonitorCacheProbes) probes.
inline const char *monitorStorageProblem(const jitlock_rt_layout &L,
                                         MonitorStorage S) {
  unsigned Fields = describe(S).LayoutFields;
  if (Fields & IndexRegionFields) {
    if (L.monitor_index_shift == 0 || L.monitor_index_shift >= 64 ||
        (L.lock_mask >> L.monitor_index_shift) != 0)
      return "monitor_index_shift";
    if (L.monitor_stride == 0)
      return "monitor_stride";
    if (L.monitor_base_offset == 0)
      return "monitor_base_offset";
  }
  if (Fields & MonitorCacheFields) {
    if (L.monitor_cache_offset == 0)
      return "monitor_cache_offset";
    if (L.monitor_cache_entries == 0)
      return "monitor_cache_entries";
    if (L.monitor_cache_probes == 0 ||
        L.monitor_cache_probes > L.monitor_cache_entries ||
        L.monitor_cache_probes > MaxMonitorCacheProbes)
      return "monitor_cache_probes";
  }
  return nullptr;
}

} // namespace jitlock

#endif // JITLOCK_MONITORSTORAGE_H
