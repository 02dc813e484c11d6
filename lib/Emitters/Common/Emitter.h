//===- Emitter.h - The base of every target's emitter -----------*- C++ -*-===//
//
// What each target's emitter (lib/Emitters/<Target>/, listed in
// Targets.def) builds on: the error reporting (the first error of a run of
// asmjit calls is the sequence's result), the check that the assembler is
// attached to code for the target, and the one check of the layout fields
// that the protocol's inline steps rely on whatever the target. A target
// adds only the checks of its own encodings. Header-only: the AArch64 cross
// build compiles one target's sources alone.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_EMITTER_H
#define JITLOCK_LIB_EMITTERS_COMMON_EMITTER_H

#include "jitlock/Emitters/Common.h"

#include <cstdint>
#include <optional>

namespace jitlock::emit {

/// Keeps the first error of a run of emitter calls: ok(A.mov(...)).
class ErrorSink {
public:
  void ok(asmjit::Error E) {
    if (E != asmjit::kErrorOk && Err == asmjit::kErrorOk)
      Err = E;
  }
  asmjit::Error error() const { return Err; }

private:
  asmjit::Error Err = asmjit::kErrorOk;
};

/// A target's emitter writes into one assembler, keeping the first error.
template <typename AssemblerT> class EmitterBase : public ErrorSink {
public:
  explicit EmitterBase(AssemblerT &A) : A(A) {}

protected:
  AssemblerT &A;
};

/// Whether `A` is attached to a CodeHolder whose code is for `Target`.
inline bool attachedFor(const asmjit::BaseEmitter &A, asmjit::Arch Target) {
  return A.code() && A.arch() == Target;
}

inline bool isSingleBit(uint64_t V) { return V && !(V & (V - 1)); }

/// Whether the sequences are the reserved ones (R1 ahead of the fast lock,
/// R4 ahead of X4, E5 only for a header whose reservation field is 0, R2's
/// CAS for a reservable one).
inline bool reservedLocking(const jitlock_rt_layout &L) {
  return L.locking_mode == JITLOCK_LOCKING_RESERVED;
}

/// The reservation fields R1, R4 and E5's test compile in: in the reserved
/// mode, 2 to 32 contiguous bits above the lock bits, the mask the lock bits
/// and the field, the thread's tag within an int32 of the thread; in any
/// other mode, no field (code without R1 and R4 would take reserved headers).
inline bool validReservation(const jitlock_rt_layout &L) {
  if (!reservedLocking(L))
    return L.reserve_bits == 0;
  if (L.reserve_bits < 2 || L.reserve_bits > 32 || L.reserve_shift < 2 ||
      L.reserve_shift + L.reserve_bits > 64)
    return false;
  const uint64_t Field = (~uint64_t(0) >> (64 - L.reserve_bits))
                         << L.reserve_shift;
  return L.reservable_value == Field &&
         L.reserve_mask == (L.lock_mask | Field) &&
         L.reserve_tag_offset <= INT32_MAX;
}

/// The layout fields every target's monitor sequences compile in, checked
/// once for both: this ABI version; a monitor storage with its fields
/// (jitlock/MonitorStorage.h) and a known inflated exit; the lock bits of
/// the protocol's shape (locked 00, so E5's desired header is h & ~mask and
/// X4 tests the bits for zero; unlocked and monitor one bit each, so E3 and
/// M1 test one bit and E5 sets one; together a contiguous lock mask); the
/// sentinel just below the first slot (E4 and X1/X3 read the entry below
/// the top, the sentinel when the stack is empty); and every offset from
/// the thread, the object and the monitor within an int32 (x86's disp32; the
/// same bound on AArch64 keeps the contract target-neutral).
inline bool validMonitorLayout(const jitlock_rt_layout &L) {
  auto FitsInt32 = [](int64_t V) { return V >= INT32_MIN && V <= INT32_MAX; };
  const uint64_t Mask = L.lock_mask;
  std::optional<MonitorStorage> Storage = monitorStorageOf(L.monitor_storage);
  const int64_t Bias = L.monitor_storage == JITLOCK_MONITORS_POINTER
                           ? int64_t(L.monitor_value)
                           : 0;
  return L.abi_version == JITLOCK_RT_ABI_VERSION && Storage &&
         !monitorStorageProblem(L, *Storage) &&
         inflatedExitOf(L.monitor_exit).has_value() && L.locked_value == 0 &&
         isSingleBit(L.unlocked_value) && isSingleBit(L.monitor_value) &&
         L.unlocked_value != L.monitor_value &&
         Mask == (L.unlocked_value | L.monitor_value) &&
         isSingleBit(Mask + (Mask & (~Mask + 1))) &&
         L.lock_stack_sentinel_offset + 8 == L.lock_stack_base_offset &&
         L.lock_stack_top_offset <= INT32_MAX &&
         L.lock_stack_end_offset <= INT32_MAX &&
         FitsInt32(int64_t(L.monitor_owner_offset) - Bias) &&
         FitsInt32(int64_t(L.monitor_recursions_offset) - Bias) &&
         FitsInt32(int64_t(L.monitor_entry_count_offset) - Bias) &&
         validReservation(L);
}

} // namespace jitlock::emit

#endif // JITLOCK_LIB_EMITTERS_COMMON_EMITTER_H
