//===- Safepoint.h - What both safepoint-poll emitters share ----*- C++ -*-===//
//
// The target-independent half of emitSafepointPoll and
// emitSafepointPollSlowCall (include/jitlock/Emitters/Common.h): which byte
// of the poll word P1 loads and which bit of it it tests, which layouts the
// poll accepts, and the shape of the poll and its slow call. Each target
// (Targets.def) supplies the instructions; the AArch64 cross build compiles
// one target alone, so this stays header-only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H
#define JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H

#include "Common/SlowPath.h"
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

/// emitPoll and emitPollSlowCall drive a target's `Poll`, an ErrorSink (ok,
/// error) over one assembler and the operands, with these members:
///   valid()                         the assembler is the target's and the
///                                   operands keep the target's contract
///   branchIfArmed(Armed, Label)     P1: read the armed byte (relaxed) and
///   branchIfDisarmed(Armed, Label)  branch on its bit
///   slowCall(RT, Back)              the glue's call of RT.SafepointPoll (P2),
///                                   then a branch to *Back, or a
///                                   fall-through when null
template <typename Poll>
asmjit::Error emitPoll(asmjit::BaseEmitter &A, Poll &T,
                       const jitlock_rt_layout &L, SlowPathMode Mode,
                       SlowPathLabels *Labels, const RuntimeEntries &RT) {
  ArmedByte Armed;
  // sequenceLabels refuses any other SlowPathMode before anything is
  // emitted.
  if (!T.valid() || !armedByte(L, Armed))
    return asmjit::kErrorInvalidArgument;
  if (Mode == SlowPathMode::OutOfLine && !RT.SafepointPoll)
    return asmjit::kErrorInvalidArgument;
  asmjit::Label Slow, Done;
  if (asmjit::Error Err = sequenceLabels(A, Mode, Labels, Slow, Done))
    return Err;
  if (Mode == SlowPathMode::OutOfLine) {
    // Disarmed, the steady state: one taken branch over the glue, which
    // calls P2 and falls through to Done.
    T.branchIfDisarmed(Armed, Done);
    T.ok(A.bind(Slow));
    T.slowCall(RT, nullptr);
  } else {
    T.branchIfArmed(Armed, Slow);
  }
  T.ok(A.bind(Done));
  return T.error();
}

template <typename Poll>
asmjit::Error emitPollSlowCall(asmjit::BaseEmitter &A, Poll &T,
                               const SlowPathLabels &Labels,
                               const RuntimeEntries &RT) {
  if (!T.valid() || !RT.SafepointPoll ||
      !slowCallLabelsUsable(*A.code(), Labels))
    return asmjit::kErrorInvalidArgument;
  // P2, then back to the code after the poll.
  T.ok(A.bind(Labels.Slow));
  T.slowCall(RT, &Labels.Done);
  return T.error();
}

} // namespace jitlock::emit::safepoint

/// Defines a target's emitSafepointPoll and emitSafepointPollSlowCall, as
/// its public header declares them, over its PollEmitter (the `Poll`
/// above); expanded in the target's namespace, where PollEmitter and
/// SafepointPollOperands are the target's.
#define JITLOCK_DEFINE_SAFEPOINT_POLL_ENTRY_POINTS(AssemblerT)                 \
  asmjit::Error emitSafepointPoll(AssemblerT &A, const jitlock_rt_layout &L,   \
                                  const SafepointPollOperands &Ops,            \
                                  SlowPathMode Mode, SlowPathLabels *Labels,   \
                                  const RuntimeEntries &RT) {                  \
    PollEmitter E(A, Ops);                                                     \
    return safepoint::emitPoll(A, E, L, Mode, Labels, RT);                     \
  }                                                                            \
  asmjit::Error emitSafepointPollSlowCall(                                     \
      AssemblerT &A, const SafepointPollOperands &Ops,                         \
      const SlowPathLabels &Labels, const RuntimeEntries &RT) {                \
    PollEmitter E(A, Ops);                                                     \
    return safepoint::emitPollSlowCall(A, E, Labels, RT);                      \
  }

#endif // JITLOCK_LIB_EMITTERS_COMMON_SAFEPOINT_H
