//===- Safepoint.h - What both safepoint-poll emitters share ----*- C++ -*-===//
//
// The target-independent half of emitSafepointPoll (include/jitlock/
// Emitters/Common.h): which byte of the poll word P1 loads and which bit of it
// it tests, and which layouts the poll accepts. Each target (Targets.def)
// encodes it; the AArch64 cross build compiles one target alone, so this stays
// header-only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H
#define JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H

#include "jitlock/Emitters/Common.h"

#include <cstdint>

namespace jitlock::emit::safepoint {

/// Where P1 finds the armed bit: bit `Bit` of the byte at thread + `Offset`.
struct ArmedByte {
  uint32_t Offset;
  uint32_t Bit;
};

/// The armed byte of `L`'s poll word, or false for a layout the poll does
/// not encode: another ABI version, an armed mask that is not one bit, or a
/// byte offset beyond INT32_MAX (x86's disp32; the same bound on AArch64
/// keeps the contract target-neutral). Both targets are little-endian, so
/// bit B of the 64-bit word is bit B % 8 of its byte B / 8: one byte holds
/// the bit wherever the layout puts it, and a byte load is enough.
inline bool armedByte(const jitlock_rt_layout &L, ArmedByte &Out) {
  const uint64_t Mask = L.poll_armed_bit;
  if (L.abi_version != JITLOCK_RT_ABI_VERSION || !Mask || (Mask & (Mask - 1)))
    return false;
  const uint32_t Bit = uint32_t(__builtin_ctzll(Mask));
  const uint64_t Offset = uint64_t(L.poll_word_offset) + Bit / 8;
  if (Offset > INT32_MAX)
    return false;
  Out = {uint32_t(Offset), Bit % 8};
  return true;
}

} // namespace jitlock::emit::safepoint

#endif // JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H
