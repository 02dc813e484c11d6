//===- StackBang.h - What both stack-bang emitters share --------*- C++ -*-===//
//
// The target-independent half of emitStackBang
// (include/jitlock/Emitters/Common.h): which layouts and frame sizes a bang
// mode accepts, and which offsets below the stack pointer BangMode::Always
// touches. Each target (Targets.def) encodes them; the AArch64 cross build
// compiles one target alone, so this stays header-only.
//
//===----------------------------------------------------------------------===//
#ifndef JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H
#define JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H

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

} // namespace jitlock::emit::stackbang

#endif // JITLOCK_LIB_EMITTERS_COMMON_STACKBANG_H
