//===- ObjectHeader.h - The lock bits of an object's header -----*- C++ -*-===//
//
// An object's 64-bit header word, at Config.header_offset from the object:
//
//   bits [1:0]  01 unlocked, 00 fast-locked, 10 monitor, 11 the embedder's
//   monitor     tag 10: the header names a monitor, in the configured
//               storage's encoding (stated once, at jitlock_rt_layout's
//               monitor_storage in jitlock/jitlock_rt.h)
//   hash        Config.hash_bits bits at Config.hash_shift; 0 means none
//   the rest    the embedder's; no transition changes them
//
// A fast lock changes only bits [1:0], so the rest of the word stays
// readable while the object is fast-locked.
//
// How a header names its monitor is MonitorStorage.h's alone (encode,
// monitorFor, publish, unpublish, names): nothing else decodes a header of
// tag 10. Deflation's A5 (Synchronizer.cpp) undoes what inflation did
// through the same interface.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_RUNTIME_OBJECTHEADER_H
#define JITLOCK_RUNTIME_OBJECTHEADER_H

#include "Config.h"

#include <atomic>
#include <cstdint>

namespace jitlock {

namespace header {
inline constexpr uint64_t LockMask = 0b11;
inline constexpr uint64_t UnlockedValue = 0b01;
inline constexpr uint64_t LockedValue = 0b00;
inline constexpr uint64_t MonitorValue = 0b10;
inline constexpr uint64_t EmbedderValue = 0b11;
/// The index storage's shift, the layout's monitor_index_shift (the encoding
/// is stated at jitlock_rt_layout's monitor_storage).
inline constexpr uint32_t MonitorIndexShift = 2;

inline bool isUnlocked(uint64_t H) { return (H & LockMask) == UnlockedValue; }
inline bool isFastLocked(uint64_t H) { return (H & LockMask) == LockedValue; }
inline bool hasMonitor(uint64_t H) { return (H & LockMask) == MonitorValue; }
inline bool isEmbedderOwned(uint64_t H) {
  return (H & LockMask) == EmbedderValue;
}

/// The header with its lock bits replaced by `Value`.
inline uint64_t withLockBits(uint64_t H, uint64_t Value) {
  return (H & ~LockMask) | Value;
}

inline uint64_t hashMask() {
  if (Config.hash_bits == 0)
    return 0;
  return ((uint64_t(1) << Config.hash_bits) - 1) << Config.hash_shift;
}
inline uint64_t hashOf(uint64_t H) {
  return (H & hashMask()) >> Config.hash_shift;
}
inline uint64_t withHash(uint64_t H, uint64_t Hash) {
  return (H & ~hashMask()) | ((Hash << Config.hash_shift) & hashMask());
}
} // namespace header

/// The header word of an object owned by the embedder. Every access is atomic
/// because other threads CAS the same word.
inline std::atomic_ref<uint64_t> headerOf(const void *Obj) {
  auto *Word = reinterpret_cast<uint64_t *>(
      const_cast<char *>(static_cast<const char *>(Obj)) +
      Config.header_offset);
  return std::atomic_ref<uint64_t>(*Word);
}

} // namespace jitlock

#endif
