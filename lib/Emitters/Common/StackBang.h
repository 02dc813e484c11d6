//===- StackBang.h - What both stack-bang emitters share --------*- C++ -*-===//
//
// The target-independent half of emitStackBang and emitStackBangSlowCall
// (include/jitlock/Emitters/Common.h): which layouts and frame sizes a bang
// mode accepts, which offsets below the stack pointer BangMode::Always
// touches, and the shape of the watermark check and its slow call. Each
// target (Targets.def) supplies the instructions; the AArch64 cross build
// compiles one target alone, so this stays header-only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H
#define JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H

#include "Common/SlowPath.h"
#include "jitlock/Emitters/Common.h"

#include <cstdint>
#include <vector>

namespace jitlock::emit::stackbang {

inline bool isValidBangMode(BangMode Bang) {
  return Bang == BangMode::Watermark || Bang == BangMode::Always ||
         Bang == BangMode::None;
}

inline bool isValidSlowPathMode(SlowPathMode Mode) {
  return Mode == SlowPathMode::OutOfLine || Mode == SlowPathMode::Labels;
}

/// The layout fields and the frame size that `Bang` compiles in are ones
/// both targets can encode: every offset from sp fits in an int32 (x86's
/// disp32; the same bound on AArch64 keeps the contract target-neutral).
inline bool isValidBang(const jitlock_rt_layout &L, uint32_t Extra,
                        BangMode Bang) {
  if (L.abi_version != JITLOCK_RT_ABI_VERSION || Extra > INT32_MAX ||
      !isValidBangMode(Bang))
    return false;
  switch (Bang) {
  case BangMode::Watermark:
    return L.stack_watermark_offset <= INT32_MAX;
  case BangMode::Always: {
    uint64_t Page = L.stack_page_size;
    return Page && !(Page & (Page - 1)) &&
           uint64_t(Extra) + uint64_t(L.stack_shadow_pages) * Page <= INT32_MAX;
  }
  case BangMode::None:
    return true;
  }
  return false;
}

/// The offsets below sp that BangMode::Always stores to, nearest first: the
/// frame's own pages when it is larger than a page, then the shadow pages
/// below the frame (ExtraBytes + i * page). Consecutive offsets are at most
/// a page apart, so no guard page can be stepped over, and the order lets a
/// stack that grows on demand grow page by page.
inline std::vector<uint32_t> alwaysOffsets(const jitlock_rt_layout &L,
                                           uint32_t Extra) {
  std::vector<uint32_t> Out;
  const uint64_t Page = L.stack_page_size;
  for (uint64_t Off = Page; Off <= Extra; Off += Page)
    Out.push_back(uint32_t(Off));
  for (uint64_t I = 1; I <= L.stack_shadow_pages; ++I)
    Out.push_back(uint32_t(Extra + I * Page));
  return Out;
}

/// emitBang and emitBangSlowCall drive a target's `Bang`, an ErrorSink
/// (ok, error) over one assembler and the operands, with these members:
///   valid()                  the assembler is the target's and the
///                            operands keep the target's register contract
///   touch(Off)               store to the word Off bytes below sp
///   compareNeed(L, Extra)    set the flags for sp - Extra against the
///                            thread's watermark (unsigned)
///   branchIfRoom(Label)      branch when it was above: room, no call
///   branchIfShort(Label)     branch when it was not
///   slowCall(Extra, RT, Back)  the glue's call of RT.StackBang, then a
///                            branch to *Back, or a fall-through when null
template <typename Bang>
asmjit::Error emitBang(asmjit::BaseEmitter &A, Bang &T,
                       const jitlock_rt_layout &L, uint32_t Extra,
                       BangMode Mode, SlowPathMode Slow, SlowPathLabels *Labels,
                       const RuntimeEntries &RT) {
  if (!T.valid() || !isValidBang(L, Extra, Mode) || !isValidSlowPathMode(Slow))
    return asmjit::kErrorInvalidArgument;
  if (Mode == BangMode::None)
    return asmjit::kErrorOk;
  if (Mode == BangMode::Always) {
    for (uint32_t Off : alwaysOffsets(L, Extra))
      T.touch(Off);
    return T.error();
  }
  // Watermark.
  if (Slow == SlowPathMode::OutOfLine && !RT.StackBang)
    return asmjit::kErrorInvalidArgument;
  asmjit::Label SlowLabel, Done;
  if (asmjit::Error Err = sequenceLabels(A, Slow, Labels, SlowLabel, Done))
    return Err;
  T.compareNeed(L, Extra);
  if (Slow == SlowPathMode::OutOfLine) {
    // The common case jumps over the glue, which falls through to Done.
    T.branchIfRoom(Done);
    T.ok(A.bind(SlowLabel));
    T.slowCall(Extra, RT, nullptr);
  } else {
    T.branchIfShort(SlowLabel);
  }
  T.ok(A.bind(Done));
  return T.error();
}

template <typename Bang>
asmjit::Error emitBangSlowCall(asmjit::BaseEmitter &A, Bang &T, uint32_t Extra,
                               const SlowPathLabels &Labels,
                               const RuntimeEntries &RT) {
  if (!T.valid() || Extra > INT32_MAX || !RT.StackBang ||
      !slowCallLabelsUsable(*A.code(), Labels))
    return asmjit::kErrorInvalidArgument;
  T.ok(A.bind(Labels.Slow));
  T.slowCall(Extra, RT, &Labels.Done);
  return T.error();
}

} // namespace jitlock::emit::stackbang

/// Defines a target's emitStackBang and emitStackBangSlowCall, as its public
/// header declares them, over its BangEmitter (the `Bang` above); expanded
/// in the target's namespace, where BangEmitter and StackBangOperands are
/// the target's.
#define JITLOCK_DEFINE_STACK_BANG_ENTRY_POINTS(AssemblerT)                     \
  asmjit::Error emitStackBang(                                                 \
      AssemblerT &A, const jitlock_rt_layout &L, const StackBangOperands &Ops, \
      uint32_t ExtraBytes, BangMode Bang, SlowPathMode Mode,                   \
      SlowPathLabels *Labels, const RuntimeEntries &RT) {                      \
    BangEmitter E(A, Ops);                                                     \
    return stackbang::emitBang(A, E, L, ExtraBytes, Bang, Mode, Labels, RT);   \
  }                                                                            \
  asmjit::Error emitStackBangSlowCall(                                         \
      AssemblerT &A, const StackBangOperands &Ops, uint32_t ExtraBytes,        \
      const SlowPathLabels &Labels, const RuntimeEntries &RT) {                \
    BangEmitter E(A, Ops);                                                     \
    return stackbang::emitBangSlowCall(A, E, ExtraBytes, Labels, RT);          \
  }

#endif // JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H
