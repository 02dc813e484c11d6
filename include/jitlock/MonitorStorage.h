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

namespace jitlock {

/// How an inflated header (tag 10) names its monitor, and so how the inline
/// monitor paths (M1, N2) find it.
enum class MonitorStorage {
  /// The header is the monitor's address with tag 10: m = h - 10.
  Pointer = JITLOCK_MONITORS_POINTER,
  /// The header is a monitor index with tag 10: m = base + (h >> shift) *
  /// stride, base loaded from the thread.
  Index = JITLOCK_MONITORS_INDEX,
  /// The header keeps its upper bits with tag 10: the monitor is the one the
  /// thread's monitor cache holds for the object, found by a few unrolled
  /// probes; a miss goes to the runtime's slow path.
  Table = JITLOCK_MONITORS_TABLE,
};

/// The most cache probes inline code unrolls: a layout asking for more is
/// refused rather than turned into a sequence of unbounded length.
inline constexpr uint32_t MaxMonitorCacheProbes = 16;

/// The storage a layout's monitor_storage names; nullopt for an unknown one.
inline std::optional<MonitorStorage> monitorStorageOf(uint32_t Storage) {
  switch (Storage) {
  case JITLOCK_MONITORS_POINTER:
    return MonitorStorage::Pointer;
  case JITLOCK_MONITORS_INDEX:
    return MonitorStorage::Index;
  case JITLOCK_MONITORS_TABLE:
    return MonitorStorage::Table;
  }
  return std::nullopt;
}

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
  switch (S) {
  case MonitorStorage::Pointer:
    return nullptr;
  case MonitorStorage::Index:
    if (L.monitor_index_shift == 0 || L.monitor_index_shift >= 64 ||
        (L.lock_mask >> L.monitor_index_shift) != 0)
      return "monitor_index_shift";
    if (L.monitor_stride == 0)
      return "monitor_stride";
    if (L.monitor_base_offset == 0)
      return "monitor_base_offset";
    return nullptr;
  case MonitorStorage::Table:
    if (L.monitor_cache_offset == 0)
      return "monitor_cache_offset";
    if (L.monitor_cache_entries == 0)
      return "monitor_cache_entries";
    if (L.monitor_cache_probes == 0 ||
        L.monitor_cache_probes > L.monitor_cache_entries ||
        L.monitor_cache_probes > MaxMonitorCacheProbes)
      return "monitor_cache_probes";
    return nullptr;
  }
  return "monitor_storage";
}

} // namespace jitlock

#endif // JITLOCK_MONITORSTORAGE_H
