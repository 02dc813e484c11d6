//===- Storage/Pointer.cpp - Pointer monitor storage ----------------------===//
//
// The pointer storage of MonitorStorage.h: the header is the monitor's
// address with tag 10 (monitors are 64-byte aligned, so the address has
// the lock bits free). Monitors live on the heap.
//
//===----------------------------------------------------------------------===//
#include "Strategies.h"

namespace jitlock {
namespace storage {
namespace pointer {

uint64_t encode(const Monitor *M) {
  return reinterpret_cast<uint64_t>(M) | header::MonitorValue;
}

Monitor *monitorFor(uint64_t H) {
  return reinterpret_cast<Monitor *>(H & ~header::LockMask);
}

} // namespace pointer
} // namespace storage
} // namespace jitlock
