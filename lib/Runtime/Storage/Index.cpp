//===- Storage/Index.cpp - Index monitor storage: the monitor region ------===//
//
// The index storage of MonitorStorage.h: monitors live in one address range
// reserved at configure and committed on demand, so they never move and a
// header can name one by its index.
//
//===----------------------------------------------------------------------===//
#include "Strategies.h"

#include "../Monitor.h"

#include <sys/mman.h>
#include <unistd.h>

namespace jitlock {
namespace storage {

namespace {
/// Guarded by the registry lock (carving, reset) or set while no thread is
/// attached (configure); attach reads Base under the thread registry lock.
struct Region {
  char *Base = nullptr;   ///< monitor 0 (never used)
  size_t Reserved = 0;    ///< bytes
  uint32_t Capacity = 0;  ///< usable monitors: indexes 1..Capacity
  uint32_t Next = 1;      ///< the next never-used index
  uint32_t Committed = 0; ///< slots [0, Committed) are read-write
};
Region TheRegion;

/// Monitors committed at a time: a whole number of pages for any page size
/// up to 64 KiB, since sizeof(Monitor) is a multiple of 64.
constexpr uint32_t CommitChunk = 1024;

void unmapRegion() {
  if (TheRegion.Base)
    munmap(TheRegion.Base, TheRegion.Reserved);
  TheRegion = Region();
}
} // namespace

uintptr_t regionBase() {
  return isIndex() ? reinterpret_cast<uintptr_t>(TheRegion.Base) : 0;
}

/// Makes the next CommitChunk slots (or those left) read-write.
static bool commitNextChunk(Region &R) {
  uint64_t End = uint64_t(R.Committed) + CommitChunk;
  if (End > uint64_t(R.Capacity) + 1)
    End = uint64_t(R.Capacity) + 1;
  size_t From = size_t(R.Committed) * sizeof(Monitor);
  size_t To = size_t(End) * sizeof(Monitor);
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  From = From / Page * Page;
  To = (To + Page - 1) / Page * Page;
  if (To > R.Reserved)
    To = R.Reserved;
  if (mprotect(R.Base + From, To - From, PROT_READ | PROT_WRITE) != 0)
    return false;
  R.Committed = uint32_t(End);
  return true;
}

void *carveFromRegion(uint32_t &Count) {
  Region &R = TheRegion;
  if (!R.Base || R.Next > R.Capacity || Count == 0) {
    Count = 0;
    return nullptr;
  }
  uint32_t First = R.Next;
  uint64_t End = uint64_t(First) + Count;
  if (End > uint64_t(R.Capacity) + 1)
    End = uint64_t(R.Capacity) + 1;
  while (End > R.Committed)
    if (!commitNextChunk(R)) {
      End = R.Committed > First ? R.Committed : First;
      break;
    }
  Count = uint32_t(End - First);
  if (Count == 0)
    return nullptr;
  R.Next = uint32_t(End);
  return R.Base + size_t(First) * sizeof(Monitor);
}

bool inRegion(const Monitor *M) {
  const char *P = reinterpret_cast<const char *>(M);
  return TheRegion.Base && P >= TheRegion.Base &&
         P < TheRegion.Base + TheRegion.Reserved;
}

void resetRegion() {
  Region &R = TheRegion;
  if (!R.Base)
    return;
  // Give the pages back and make them inaccessible again: a fresh mapping
  // over the old one.
  size_t Committed = size_t(R.Committed) * sizeof(Monitor);
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  Committed = (Committed + Page - 1) / Page * Page;
  if (Committed > R.Reserved)
    Committed = R.Reserved;
  if (Committed)
    mmap(R.Base, Committed, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  R.Next = 1;
  R.Committed = 0;
}

namespace index {
uint64_t encode(const Monitor *M) {
  uint64_t Index = uint64_t(
      (reinterpret_cast<const char *>(M) - TheRegion.Base) / sizeof(Monitor));
  return Index << header::MonitorIndexShift | header::MonitorValue;
}

Monitor *monitorFor(uint64_t H) {
  uint64_t Index = H >> header::MonitorIndexShift;
  return reinterpret_cast<Monitor *>(TheRegion.Base +
                                     size_t(Index) * sizeof(Monitor));
}

int configure(const jitlock_rt_config &Cfg) {
  bool WantRegion = Cfg.monitor_storage == JITLOCK_MONITORS_INDEX;
  uint32_t Capacity =
      Cfg.monitor_capacity ? Cfg.monitor_capacity : DefaultCapacity;
  if (!WantRegion || TheRegion.Capacity != Capacity)
    unmapRegion();
  if (!WantRegion || TheRegion.Base)
    return JITLOCK_OK;
  size_t Bytes = (size_t(Capacity) + 1) * sizeof(Monitor);
  void *Base = mmap(nullptr, Bytes, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Base == MAP_FAILED)
    return JITLOCK_ENOMEM;
  TheRegion.Base = static_cast<char *>(Base);
  TheRegion.Reserved = Bytes;
  TheRegion.Capacity = Capacity;
  return JITLOCK_OK;
}
} // namespace index

} // namespace storage
} // namespace jitlock
